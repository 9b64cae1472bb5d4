/**
 * Who may do what in the console, from the `role` claim (the user's roles as the sign-in source
 * gives them): `idp-admin` everything (as the API's `admin_api`), `idp-auditor` reading
 * everything (`admin_api_readonly`), `idp-webhooks` the webhook endpoints (`admin_console_webhooks`).
 */

export const CONSOLE_ROLES = ['idp-admin', 'idp-auditor', 'idp-webhooks'] as const;
export type ConsoleRole = (typeof CONSOLE_ROLES)[number];

/** The console's pages, in the navigation's order. */
export type ConsoleArea = 'overview' | 'clients' | 'users' | 'api-scopes' | 'keys' | 'webhooks' | 'events';

export interface ConsolePage {
  area: ConsoleArea;
  /** Below `/admin`. */
  path: string;
  label: string;
}

export const CONSOLE_PAGES: readonly ConsolePage[] = [
  { area: 'overview', path: '', label: 'Overview' },
  { area: 'clients', path: '/clients', label: 'Clients' },
  { area: 'users', path: '/users', label: 'Users' },
  { area: 'api-scopes', path: '/api-scopes', label: 'API scopes' },
  { area: 'keys', path: '/keys', label: 'Signing keys' },
  { area: 'webhooks', path: '/webhooks', label: 'Webhooks' },
  { area: 'events', path: '/events', label: 'Audit log' },
];

const isConsoleRole = (role: string): role is ConsoleRole => (CONSOLE_ROLES as readonly string[]).includes(role);

/** The console roles among a user's roles; none: the console is not theirs. */
export function consoleRolesOf(roles: readonly string[]): ConsoleRole[] {
  return roles.filter(isConsoleRole);
}

export function mayRead(roles: readonly ConsoleRole[], area: ConsoleArea): boolean {
  return roles.includes('idp-admin') || roles.includes('idp-auditor') || (area === 'webhooks' && roles.includes('idp-webhooks'));
}

export function mayChange(roles: readonly ConsoleRole[], area: ConsoleArea): boolean {
  return roles.includes('idp-admin') || (area === 'webhooks' && roles.includes('idp-webhooks'));
}

/** The pages a holder of `roles` may open: the navigation shows these. */
export function pagesFor(roles: readonly ConsoleRole[]): ConsolePage[] {
  return CONSOLE_PAGES.filter((page) => mayRead(roles, page.area));
}
