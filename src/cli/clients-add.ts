/**
 * `idp clients add`: registers a client. A confidential client gets a generated secret (256 bits),
 * printed once and stored only as its hash.
 */
import type { ClientRecord, GrantType } from '../store/types.ts';
import { hashClientSecret, randomToken } from '../tokens/opaque.ts';
import { parseCommand } from './args.ts';
import { auditChange } from './audit.ts';
import { clientDocument } from './client-view.ts';
import { RefusedError, UsageError, type CliContext, type ExitCode } from './context.ts';
import { refuseConstraintViolations } from './database-errors.ts';
import { report } from './output.ts';
import { unknownScopeReason, unknownScopes } from './scope-rules.ts';
import { CLIENT_FIELDS } from './seed-schema.ts';
import { RULE_MESSAGES, isClientId, isGrantType, isLifetime, isOrigin, isRedirectUri, isScopeToken, parseInstant } from './rules.ts';

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
function checkEach(flag: string, values: string[], rule: (v: string) => boolean, message: string): string[] {
  const bad = values.find((v) => !rule(v));
  if (bad !== undefined) throw new UsageError(`--${flag} "${bad}": ${message}`);
  return values;
}

function parseLifetime(raw: string | undefined): number {
  if (raw === undefined) return 3600;
  const seconds = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!isLifetime(seconds)) throw new UsageError(`--access-token-lifetime "${raw}": ${RULE_MESSAGES.lifetime}`);
  return seconds;
}

function parseExpiry(raw: string | undefined): Date | null {
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
  // RFC 6749 §4.4: the client credentials grant is for confidential clients only.
  if (isPublic && client.grantTypes.includes('client_credentials')) {
    throw new RefusedError(`client ${client.clientId}: a public client cannot use the client_credentials grant`);
  }
  const secret = isPublic ? undefined : randomToken();
  const record: ClientRecord = { ...client, secretHash: secret === undefined ? null : hashClientSecret(secret) };
  const durable = await context.openDurable();
  const unknown = await unknownScopes(durable, record.scopes);
  if (unknown.length > 0) throw new RefusedError(`client ${record.clientId}: ${unknownScopeReason(unknown[0] as string)}`);
  await refuseConstraintViolations(`client ${record.clientId}`, () =>
    durable.transaction(async (tx) => {
      // The store upserts; adding must never replace a client (and its secret) that exists.
      if (await tx.clients.get(record.clientId)) throw new RefusedError(`client ${record.clientId} already exists`);
      await tx.clients.upsert(record);
    }),
  );
  auditChange(context, { action: 'create', resource: 'client', resource_id: record.clientId, fields: CLIENT_FIELDS });
  report(context, { ...clientDocument(record), ...(secret === undefined ? {} : { client_secret: secret }) }, () =>
    secret === undefined
      ? [`client ${record.clientId} created (public: it has no secret)`]
      : [`client ${record.clientId} created; its secret, shown only this once:`, secret],
  );
  return 0;
}
