/**
 * `idp clients add`: the flags become a client for src/admin/clients.ts, which registers it; its
 * generated secret is printed once. A malformed flag value is a usage error naming the flag.
 */
import { createClient } from '../admin/clients.ts';
import { RULE_MESSAGES, isClientId, isGrantType, isLifetime, isOrigin, isRedirectUri, isScopeToken, parseInstant } from '../admin/rules.ts';
import type { ClientRecord, GrantType } from '../store/records.ts';
import { parseCommand } from './args.ts';
import { changeDeps, cliActor } from './audit.ts';
import { clientDocument } from './client-view.ts';
import { UsageError, type CliContext, type ExitCode } from './context.ts';
import { report } from './output.ts';

const ADD_SPEC = {
  usage: 'idp clients add --id ID [options], see idp help',
  options: {
    id: { type: 'string' },
    name: { type: 'string' },
    public: { type: 'boolean' },
    grant: { type: 'string', multiple: true },
    scope: { type: 'string', multiple: true },
    'redirect-uri': { type: 'string', multiple: true },
    'post-logout-redirect-uri': { type: 'string', multiple: true },
    'cors-origin': { type: 'string', multiple: true },
    'access-token-lifetime': { type: 'string' },
    'require-consent': { type: 'boolean' },
    'secret-expires-at': { type: 'string' },
  },
  positionals: [],
} as const;

/** Every value of a repeatable flag must follow `rule`; the first that does not is named. */
export function checkEach(flag: string, values: string[], rule: (v: string) => boolean, message: string): string[] {
  const bad = values.find((v) => !rule(v));
  if (bad !== undefined) throw new UsageError(`--${flag} "${bad}": ${message}`);
  return values;
}

export function parseLifetime(raw: string | undefined): number {
  if (raw === undefined) return 3600;
  const seconds = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!isLifetime(seconds)) throw new UsageError(`--access-token-lifetime "${raw}": ${RULE_MESSAGES.lifetime}`);
  return seconds;
}

export function parseExpiry(raw: string | undefined): Date | null {
  if (raw === undefined) return null;
  const at = parseInstant(raw);
  if (!at) throw new UsageError(`--secret-expires-at "${raw}": ${RULE_MESSAGES.instant}`);
  return at;
}

/** Builds the client the flags describe (without its secret), refusing any malformed value. */
function clientFromFlags(args: string[]): { client: Omit<ClientRecord, 'secretHash'>; isPublic: boolean } {
  const { values } = parseCommand(ADD_SPEC, args);
  if (values.id === undefined) throw new UsageError(`missing option --id (usage: ${ADD_SPEC.usage})`);
  if (!isClientId(values.id)) throw new UsageError(`--id "${values.id}": ${RULE_MESSAGES.clientId}`);
  const grants = checkEach('grant', values.grant ?? ['authorization_code'], isGrantType, RULE_MESSAGES.grantType) as GrantType[];
  const isPublic = values.public ?? false;
  if (isPublic && values['secret-expires-at'] !== undefined) throw new UsageError('--secret-expires-at: a public client has no secret');
  return {
    isPublic,
    client: {
      clientId: values.id,
      displayName: values.name ?? '',
      enabled: true,
      secretExpiresAt: parseExpiry(values['secret-expires-at']),
      grantTypes: [...new Set(grants)],
      scopes: checkEach('scope', values.scope ?? [], isScopeToken, RULE_MESSAGES.scopeToken),
      redirectUris: checkEach('redirect-uri', values['redirect-uri'] ?? [], isRedirectUri, RULE_MESSAGES.redirectUri),
      postLogoutRedirectUris: checkEach('post-logout-redirect-uri', values['post-logout-redirect-uri'] ?? [], isRedirectUri, RULE_MESSAGES.redirectUri),
      corsOrigins: checkEach('cors-origin', values['cors-origin'] ?? [], isOrigin, RULE_MESSAGES.origin),
      accessTokenLifetime: parseLifetime(values['access-token-lifetime']),
      requireConsent: values['require-consent'] ?? false,
    },
  };
}

export async function addClient(args: string[], context: CliContext): Promise<ExitCode> {
  const { client, isPublic } = clientFromFlags(args);
  const created = await createClient(await changeDeps(context), { ...client, public: isPublic }, cliActor(context));
  const { clientId } = created.client.record;
  const { secret } = created;
  report(context, { ...clientDocument(created.client.record), ...(secret === undefined ? {} : { client_secret: secret }) }, () =>
    secret === undefined
      ? [`client ${clientId} created (public: it has no secret)`]
      : [`client ${clientId} created; its secret, shown only this once:`, secret],
  );
  return 0;
}
