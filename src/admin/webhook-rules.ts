/**
 * The rules of a webhook endpoint's fields, for the command line and the administration API
 * alike: an absolute URL that webhooks may reach (https in production; no address, literal or
 * resolved, that is loopback, private, link-local or reserved unless IDP_WEBHOOK_ALLOWED_NETWORKS
 * allows it), event types that exist (or `*`), a short description.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { hasControlCharacters } from '../control-characters.ts';
import type { AddressPolicy } from '../events/addresses.ts';
import { AUDIT_EVENT_TYPES } from '../events/audit-events.ts';
import { AdminError, formatPath, type FieldProblem } from './errors.ts';

export const MAX_URL_LENGTH = 2000;
export const MAX_DESCRIPTION_LENGTH = 500;
const CONTROL_PROBLEM = 'must not hold control characters or bidirectional overrides';

/** The addresses a host name resolves to now; none when it does not resolve (each attempt resolves again). */
export type ResolveHost = (host: string) => Promise<string[]>;

export const resolveHost: ResolveHost = async (host) => {
  try {
    return (await lookup(host, { all: true })).map((a) => a.address);
  } catch {
    return [];
  }
};

/** The problem with a URL, or undefined. */
export async function urlProblem(text: string, policy: AddressPolicy, resolve: ResolveHost): Promise<string | undefined> {
  // The URL parser drops tabs and line breaks silently: what would be stored is not what was read.
  if (hasControlCharacters(text)) return CONTROL_PROBLEM;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'must be an absolute https URL';
  }
  if (text.length > MAX_URL_LENGTH) return `must be at most ${MAX_URL_LENGTH} characters`;
  if (url.hash) return 'must not carry a fragment';
  const problem = policy.urlProblem(url);
  if (problem) return problem;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0) return undefined;
  const refused = (await resolve(host)).filter((address) => !policy.permits(address));
  if (refused.length > 0) return `must not point to ${host}: it resolves to ${refused.join(', ')}, a loopback, private, link-local or reserved address (IDP_WEBHOOK_ALLOWED_NETWORKS can allow a range)`;
  return undefined;
}

/** `["*"]`, or event types of the audit table, each once; `["*"]` when none are given. */
export function eventTypeProblems(types: readonly string[]): FieldProblem[] {
  return types.flatMap((type, index) =>
    type === '*' || (AUDIT_EVENT_TYPES as readonly string[]).includes(type)
      ? []
      : [{ path: ['event_types', index], message: `unknown event type ${JSON.stringify(type).slice(0, 80)} (an audit event's type, or *)` }]);
}

export function normalEventTypes(types: readonly string[] | undefined): string[] {
  const unique = [...new Set(types ?? [])];
  return unique.length === 0 || unique.includes('*') ? ['*'] : unique;
}

export function descriptionProblem(text: string): string | undefined {
  if (text.length > MAX_DESCRIPTION_LENGTH) return `must be at most ${MAX_DESCRIPTION_LENGTH} characters`;
  if (hasControlCharacters(text)) return CONTROL_PROBLEM;
  return undefined;
}

/** Every problem of the fields given, as one AdminError naming each; nothing when all hold. */
export async function refuseWebhookFields(
  fields: { url?: string | undefined; eventTypes?: readonly string[] | undefined; description?: string | undefined },
  policy: AddressPolicy,
  resolve: ResolveHost,
): Promise<void> {
  const problems: FieldProblem[] = [];
  const url = fields.url === undefined ? undefined : await urlProblem(fields.url, policy, resolve);
  if (url) problems.push({ path: ['url'], message: url });
  if (fields.eventTypes) problems.push(...eventTypeProblems(fields.eventTypes));
  const description = fields.description === undefined ? undefined : descriptionProblem(fields.description);
  if (description) problems.push({ path: ['description'], message: description });
  if (problems.length === 0) return;
  throw new AdminError('invalid', problems.map((p) => `${formatPath(p.path)} ${p.message}`).join('; '), problems);
}
