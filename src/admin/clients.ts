/**
 * Clients: registering, reading, removing (changes: client-update.ts). A confidential client gets a generated
 * secret (256 bits), returned once and stored only as its hash.
 */
import { CONSOLE_CLIENT_ID, type ClientRecord, type Versioned } from '../store/records.ts';
import type { DurableStore, PageRequest } from '../store/types.ts';
import { hashClientSecret, randomToken } from '../tokens/opaque.ts';
import { readPage, type Page } from './pages.ts';
import { AdminError, formatPath, staleOrGone, type FieldProblem } from './errors.ts';
import { seedClientRecord } from './seed-records.ts';
import { CLIENT_FIELDS, newClientSchema, parseWire, type NewClientFields } from './seed-schema.ts';
import { recordedChange, type ChangeActor, type ChangeDeps } from './recorded-change.ts';
import { RULE_MESSAGES, isClientId, isGrantType, isLifetime, isOrigin, isPlainText, isRedirectUri, isScopeToken } from './rules.ts';
import { unknownScopeReason, unknownScopes } from './scopes.ts';

/** RFC 6749 §2.1 client types: confidential clients hold a secret, public ones do not. */
export function clientType(client: Pick<ClientRecord, 'secretHash'>): 'confidential' | 'public' {
  return client.secretHash === null ? 'public' : 'confidential';
}

/** 256 random bits, so a salted SHA-256 is enough to store it (src/tokens/opaque.ts). */
export function newClientSecret(): { secret: string; hash: string } {
  const secret = randomToken();
  return { secret, hash: hashClientSecret(secret) };
}

/** A client to register: the record less its secret, which is generated unless it is public. */
export type NewClient = Omit<ClientRecord, 'secretHash'> & { public: boolean };

export interface ClientCreated {
  kind: 'created';
  client: Versioned<ClientRecord>;
  /** The generated secret, to be shown once; undefined for a public client. */
  secret: string | undefined;
}

function each(field: string, values: readonly string[], rule: (v: string) => boolean, message: string): FieldProblem[] {
  return values.flatMap((v, i) => (rule(v) ? [] : [{ path: [field, i], message }]));
}

/**
 * Every wrong field of a client as it is to be stored, by its wire name: the rules of each field,
 * then those across fields. RFC 6749 §4.4: the client credentials grant is for confidential
 * clients only (the CHECK constraint clients_client_credentials_confidential mirrors it).
 */
export function clientProblems(client: NewClient): FieldProblem[] {
  return [
    ...(isClientId(client.clientId) ? [] : [{ path: ['client_id'], message: RULE_MESSAGES.clientId }]),
    ...(client.clientId === CONSOLE_CLIENT_ID ? [{ path: ['client_id'], message: RULE_MESSAGES.reservedClientId }] : []),
    ...(isPlainText(client.displayName) ? [] : [{ path: ['display_name'], message: RULE_MESSAGES.plainText }]),
    ...each('grant_types', client.grantTypes, isGrantType, RULE_MESSAGES.grantType),
    ...each('scopes', client.scopes, isScopeToken, RULE_MESSAGES.scopeToken),
    ...each('redirect_uris', client.redirectUris, isRedirectUri, RULE_MESSAGES.redirectUri),
    ...each('post_logout_redirect_uris', client.postLogoutRedirectUris, isRedirectUri, RULE_MESSAGES.redirectUri),
    ...each('cors_origins', client.corsOrigins, isOrigin, RULE_MESSAGES.origin),
    ...(isLifetime(client.accessTokenLifetime) ? [] : [{ path: ['access_token_lifetime'], message: RULE_MESSAGES.lifetime }]),
    ...(client.public && client.secretExpiresAt !== null ? [{ path: ['secret_expires_at'], message: 'a public client has no secret' }] : []),
    ...(client.public && client.grantTypes.includes('client_credentials') ? [{ path: ['grant_types'], message: RULE_MESSAGES.publicClientCredentials }] : []),
  ];
}

/** A client to register from its wire fields (the API's body, the command line's flags), the defaults filled in. */
export function newClientOf(input: NewClientFields): NewClient {
  const fields = parseWire(newClientSchema, input, `client ${String(input.client_id)}`);
  const { secretHash: _none, ...record } = seedClientRecord({ ...fields, client_secret: null });
  return { ...record, public: fields.public ?? false };
}

/** Refuses a client that breaks a rule, naming the first wrong field in the message and every one in the problems. */
export function refuseClientProblems(client: NewClient): void {
  const problems = clientProblems(client);
  const first = problems[0];
  if (first) throw new AdminError('invalid', `client ${client.clientId}: ${formatPath(first.path)} ${first.message}`, problems);
}

/** Every scope of the client must be standard or an API scope of the database (read in the change's transaction). */
export async function refuseUnknownScopes(tx: DurableStore, clientId: string, scopes: readonly string[]): Promise<void> {
  const unknown = await unknownScopes(tx, scopes);
  if (unknown[0] === undefined) return;
  throw new AdminError('invalid', `client ${clientId}: ${unknownScopeReason(unknown[0])}`, [{ path: ['scopes', scopes.indexOf(unknown[0])], message: unknownScopeReason(unknown[0]) }]);
}

/** Registers a client: an insert that fails on conflict, so of concurrent identical creates one succeeds. */
export async function createClient(deps: ChangeDeps, input: NewClient, actor: ChangeActor): Promise<ClientCreated> {
  refuseClientProblems(input);
  const { public: isPublic, ...fields } = input;
  const secret = isPublic ? undefined : newClientSecret();
  const client: ClientRecord = { ...fields, grantTypes: [...new Set(fields.grantTypes)], secretHash: secret?.hash ?? null };
  const subject = `client ${client.clientId}`;
  const created = await recordedChange(deps, actor, subject, async (tx) => {
    await refuseUnknownScopes(tx, client.clientId, client.scopes);
    const row = await tx.clients.insert(client);
    if (!row) throw new AdminError('conflict', `${subject} already exists`);
    return { result: row, change: { action: 'create', resource: 'client', resource_id: client.clientId, fields: CLIENT_FIELDS } };
  });
  return { kind: 'created', client: created, secret: secret?.secret };
}

export async function getClient(durable: DurableStore, id: string): Promise<ClientRecord> {
  return (await getVersionedClient(durable, id)).record;
}

/** The client and its row version (the API's ETag). */
export async function getVersionedClient(durable: DurableStore, id: string): Promise<Versioned<ClientRecord>> {
  // An id the table cannot hold (a NUL byte, which PostgreSQL refuses) names no client.
  const client = isClientId(id) ? await durable.clients.getVersioned(id) : undefined;
  if (!client) throw new AdminError('not_found', `no client with id ${id}`);
  return client;
}

export async function listClients(durable: DurableStore): Promise<ClientRecord[]> {
  return durable.clients.list();
}

export function clientsPage(durable: DurableStore, request: PageRequest): Promise<Page<ClientRecord>> {
  return readPage((r) => durable.clients.page(r), (client) => client.clientId, request);
}

/** With `ifVersion` (the API's If-Match), only the client at that version is removed. */
export async function removeClient(deps: ChangeDeps, id: string, actor: ChangeActor, ifVersion?: number): Promise<{ kind: 'removed'; clientId: string }> {
  if (!isClientId(id)) throw new AdminError('not_found', `no client with id ${id}`);
  return recordedChange(deps, actor, `client ${id}`, async (tx) => {
    if (await tx.clients.remove(id, ifVersion)) return { result: { kind: 'removed', clientId: id }, change: { action: 'delete', resource: 'client', resource_id: id, fields: [] } };
    if (ifVersion === undefined) throw new AdminError('not_found', `no client with id ${id}`);
    throw staleOrGone((await tx.clients.get(id)) !== undefined, `client ${id}`);
  });
}
