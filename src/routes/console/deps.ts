/** What the console's routes are given (made once in app.ts from the services). */
import { createConsoleSessions, type ConsoleSessionLimits, type ConsoleSessions } from '../../console/session.ts';
import { createConsoleSignIn, type ConsoleSignIn } from '../../console/sign-in.ts';
import type { Services } from '../../composition/services.ts';
import { consoleBaseUrl } from '../../config.ts';
import { basePathOf } from '../../composition/protocol.ts';
import type { Keyring } from '../../tokens/secret-box.ts';
import { createAdminApiDeps, type AdminApiDeps } from '../admin/deps.ts';
import type { RequestAudit } from '../shared/audit.ts';
import type { PageContext } from '../shared/pages.ts';

export interface ConsoleDeps {
  /** The administrative operations' deps: the very ones the API calls them with. */
  admin: AdminApiDeps;
  services: Pick<Services, 'ephemeral' | 'source' | 'mailer' | 'keys' | 'durable' | 'users' | 'clock' | 'recovery' | 'config' | 'userSessions'>;
  sessions: ConsoleSessions;
  signIn: ConsoleSignIn;
  csrfKey: Keyring;
  audit: RequestAudit;
  page: PageContext;
  secureCookies: boolean;
}

export function createConsoleDeps(services: Services, audit: RequestAudit, page: PageContext, limits?: ConsoleSessionLimits): ConsoleDeps {
  const { config } = services;
  const consoleUrl = consoleBaseUrl(config);
  const sessions = createConsoleSessions({ ephemeral: services.ephemeral, clock: services.clock, users: services.users, sessions: services.sessions, ...(limits ? { limits } : {}) });
  const signIn = createConsoleSignIn({
    baseUrl: config.baseUrl,
    consoleUrl,
    basePath: basePathOf(consoleUrl),
    issuer: config.issuer,
    clock: services.clock,
    keys: services.keys,
    ephemeral: services.ephemeral,
    codes: services.ephemeral.codes,
    users: services.users,
    refreshTokens: services.durable.refreshTokens,
    refreshTokenCodec: services.refreshTokenCodec,
    revocations: services.revocations,
    refreshLifetime: { idleSeconds: config.refreshTokenIdleLifetime, absoluteSeconds: config.refreshTokenAbsoluteLifetime },
    browserSessions: services.sessions,
    consoleSessions: sessions,
  });
  return {
    admin: createAdminApiDeps(services, audit),
    services,
    sessions,
    signIn,
    csrfKey: services.csrfKey,
    audit,
    page,
    secureCookies: consoleUrl.startsWith('https:'),
  };
}
