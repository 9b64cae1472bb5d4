/**
 * Clients: registering, reading, enabling, removing. A confidential client gets a generated
 * secret (256 bits), returned once and stored only as its hash.
 */
import type { ClientRecord, Versioned } from '../store/records.ts';
import type { DurableStore, PageRequest } from '../store/types.ts';
import { createOnly } from './create-only.ts';
import { readPage, type Page } from './pages.ts';
import { AdminError, staleOrGone, type FieldProblem } from './errors.ts';
import { RULE_MESSAGES, isClientId, isGrantType, isLifetime, isOrigin, isPlainText, isRedirectUri, isScopeToken } from './rules.ts';
import { unknownScopeReason, unknownScopes } from './scopes.ts';
import { newClientSecret } from './secrets.ts';

/** RFC 6749 §2.1 client types: confidential clients hold a secret, public ones do not. */
export function clientType(client: Pick<ClientRecord, 'secretHash'>): 'confidential' | 'public' {
  return client.secretHash === null ? 'public' : 'confidential';
}

/** RFC 6749 §4.4: the client credentials grant is for confidential clients only. */
export function publicClientWithClientCredentials(isPublic: boolean, grantTypes: readonly unknown[]): boolean {
  return isPublic && grantTypes.includes('client_credentials');
}

/** A client to register: the record less its secret, which is generated unless it is public. */
export type NewClient = Omit<ClientRecord, 'secretHash'> & { public: boolean };

export interface ClientCreated {
  kind: 'created';
  client: ClientRecord;
  /** The generated secret, to be shown once; undefined for a public client. */
  secret: string | undefined;
}

function each(field: string, values: readonly string[], rule: (v: string) => boolean, message: string): FieldProblem[] {
  return values.flatMap((v, i) => (rule(v) ? [] : [{ path: [field, i], message }]));
}

/** Every wrong field of a client to register, by its wire name. */
export function clientProblems(client: NewClient): FieldProblem[] {
  return [
    ...(isClientId(client.clientId) ? [] : [{ path: ['client_id'], message: RULE_MESSAGES.clientId }]),
    ...(isPlainText(client.displayName) ? [] : [{ path: ['display_name'], message: RULE_MESSAGES.plainText }]),
    ...each('grant_types', client.grantTypes, isGrantType, RULE_MESSAGES.grantType),
    ...each('scopes', client.scopes, isScopeToken, RULE_MESSAGES.scopeToken),
    ...each('redirect_uris', client.redirectUris, isRedirectUri, RULE_MESSAGES.redirectUri),
    ...each('post_logout_redirect_uris', client.postLogoutRedirectUris, isRedirectUri, RULE_MESSAGES.redirectUri),
    ...each('cors_origins', client.corsOrigins, isOrigin, RULE_MESSAGES.origin),
    ...(isLifetime(client.accessTokenLifetime) ? [] : [{ path: ['access_token_lifetime'], message: RULE_MESSAGES.lifetime }]),
    ...(client.public && client.secretExpiresAt !== null ? [{ path: ['secret_expires_at'], message: 'a public client has no secret' }] : []),
  ];
}

export async function createClient(durable: DurableStore, input: NewClient): Promise<ClientCreated> {
  const { public: isPublic, ...fields } = input;
  const problems = clientProblems(input);
  if (problems.length > 0) throw new AdminError('invalid', `client ${input.clientId}: ${problems.length} wrong field(s)`, problems);
  if (publicClientWithClientCredentials(isPublic, fields.grantTypes)) {
    throw new AdminError('invalid', `client ${fields.clientId}: a public client cannot use the client_credentials grant`, [
      { path: ['grant_types'], message: 'a public client cannot use the client_credentials grant' },
    ]);
  }
  const unknown = await unknownScopes(durable, fields.scopes);
  if (unknown[0] !== undefined) {
    throw new AdminError('invalid', `client ${fields.clientId}: ${unknownScopeReason(unknown[0])}`, [{ path: ['scopes', fields.scopes.indexOf(unknown[0])], message: unknownScopeReason(unknown[0]) }]);
  }
  const secret = isPublic ? undefined : newClientSecret();
  const client: ClientRecord = { ...fields, grantTypes: [...new Set(fields.grantTypes)], secretHash: secret?.hash ?? null };
  await createOnly(durable, `client ${client.clientId}`, (tx) => tx.clients.get(client.clientId), (tx) => tx.clients.upsert(client));
  return { kind: 'created', client, secret: secret?.secret };
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

export async function setClientEnabled(durable: DurableStore, id: string, enabled: boolean): Promise<{ kind: 'updated'; clientId: string; enabled: boolean }> {
  if (!(await durable.clients.update(id, { enabled }))) throw new AdminError('not_found', `no client with id ${id}`);
  return { kind: 'updated', clientId: id, enabled };
}

/** With `ifVersion` (the API's If-Match), only the client at that version is removed. */
export async function removeClient(durable: DurableStore, id: string, ifVersion?: number): Promise<{ kind: 'removed'; clientId: string }> {
  if (!isClientId(id)) throw new AdminError('not_found', `no client with id ${id}`);
  if (await durable.clients.remove(id, ifVersion)) return { kind: 'removed', clientId: id };
  if (ifVersion === undefined) throw new AdminError('not_found', `no client with id ${id}`);
  throw staleOrGone((await durable.clients.get(id)) !== undefined, `client ${id}`);
}
