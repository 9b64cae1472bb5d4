/**
 * The grants without HTTP, on the real stores in process: PGlite in memory (migrated), the
 * in-process ephemeral store and the key manager, all on one injected clock the test moves.
 * Audit events are recorded into an array to assert on.
 */
import { randomUUID } from 'node:crypto';
import { OAuthError } from '../../../src/errors.ts';
import { createAuthorizationCodeGrant } from '../../../src/grants/authorization-code.ts';
import type { CodeRecord } from '../../../src/store/records.ts';
import { createClientCredentialsGrant } from '../../../src/grants/client-credentials.ts';
import type { Grant, RefreshLifetime, TokenResponse } from '../../../src/grants/common.ts';
import type { GrantsDeps } from '../../../src/grants/index.ts';
import { createRefreshTokenGrant } from '../../../src/grants/refresh-token.ts';
import type { Audit } from '../../../src/events/record.ts';
import type { AuthenticatedClient } from '../../../src/protocol/client-auth.ts';
import type { IntrospectionDeps } from '../../../src/protocol/introspection.ts';
import type { RevocationDeps } from '../../../src/protocol/revocation.ts';
import { findRefreshToken } from '../../../src/protocol/token-lookup.ts';
import { createMemoryEphemeralStore } from '../../../src/store/ephemeral/memory.ts';
import { openDurableStore } from '../../../src/store/sql/durable.ts';
import { openMigratedEmbedded } from '../../helpers/embedded-database.ts';
import type { ClientRecord, RefreshFamilyState, UserRecord } from '../../../src/store/records.ts';
import type { DurableStore, EphemeralStore } from '../../../src/store/types.ts';
import { createKeyManager, type KeyManager } from '../../../src/tokens/keys.ts';
import { hashClientSecret } from '../../../src/tokens/opaque.ts';
import { createRefreshTokenCodec } from '../../../src/tokens/refresh-tokens.ts';
import { createRevocationList, isAccessTokenRevoked } from '../../../src/tokens/revocation-list.ts';
import { pkce } from '../../helpers/oauth.ts';

export { pkce };

export const START = Date.UTC(2026, 10, 22, 12, 0, 0);
export const ISSUER = 'https://id.example.test/';

export interface AuditEvent {
  event: string;
  fields: Record<string, unknown>;
}

/** Everything the grants, introspection and revocation use, as the app wires it. */
export type HarnessDeps = GrantsDeps & IntrospectionDeps & RevocationDeps;

export interface Harness {
  durable: DurableStore;
  ephemeral: EphemeralStore;
  keys: KeyManager;
  deps: HarnessDeps;
  /** The grants, made over `deps`. */
  grants: { code: Grant; refresh: Grant; clientCredentials: Grant };
  /** The audit a request is handed: records each event into `audit`. */
  log: Audit;
  /** Milliseconds since the epoch, as the injected clock reads. */
  now(): number;
  /** Moves the injected clock forward. */
  advance(seconds: number): void;
  audit: AuditEvent[];
  client(clientId: string): AuthenticatedClient;
  user: UserRecord;
  /** Adds another local user (for cases that lock or remove one). */
  addUser(username: string): Promise<UserRecord>;
  /** Signs a user (Alice by default) in at a client and redeems the code: the first tokens of a new family. */
  signIn(options?: { clientId?: string; scopes?: string[]; userId?: string }): Promise<TokenResponse & { refresh_token: string }>;
  refresh(refreshToken: string, clientId?: string, scope?: string): Promise<TokenResponse>;
  /** A refresh token as stored now: its family, and whether it is of the family's current generation. */
  refreshState(refreshToken: string): Promise<{ family: RefreshFamilyState; current: boolean } | undefined>;
  /** Whether an access token was revoked, on its own or with its family. */
  isRevoked(accessToken: string): Promise<boolean>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  refreshLifetime?: RefreshLifetime;
  graceSeconds?: number;
  /** A PostgreSQL database to use (migrated here) instead of an embedded one. */
  databaseUrl?: string;
}

export const SECRET = 'unit-test-client-secret-0123456789abcdefghij';
export const REDIRECT = 'https://rp.example/cb';
export const POST_LOGOUT_REDIRECT = 'https://rp.example/signed-out';

function clientRecord(clientId: string, overrides: Partial<ClientRecord> = {}): ClientRecord {
  return {
    clientId, displayName: `Client ${clientId}`, enabled: true, secretHash: hashClientSecret(SECRET), secretExpiresAt: null,
    grantTypes: ['authorization_code', 'refresh_token', 'client_credentials'],
    scopes: ['openid', 'profile', 'email', 'offline_access', 'orders.read', 'orders.write'],
    redirectUris: [REDIRECT], postLogoutRedirectUris: [], corsOrigins: [], accessTokenLifetime: 600, requireConsent: false,
    ...overrides,
  };
}


/** Stores a code for `record` as the sign-in flow does (the code store's write), and returns the code. */
export async function issueCode(ephemeral: Pick<EphemeralStore, 'write' | 'codes'>, record: CodeRecord): Promise<string> {
  const { code, write } = ephemeral.codes.create(record);
  await ephemeral.write([write]);
  return code;
}

export async function openHarness(options: HarnessOptions = {}): Promise<Harness> {
  let now = START;
  const clock = () => now;
  const durable = options.databaseUrl ? await openDurableStore({ databaseUrl: options.databaseUrl }) : await openMigratedEmbedded();
  await durable.migrate();
  const ephemeral = createMemoryEphemeralStore(clock);
  const keys = createKeyManager({ keys: durable.signingKeys, kek: Buffer.alloc(32, 1), clock });
  await keys.ensureSigningKey();

  const clients = new Map<string, ClientRecord>([
    ['web', clientRecord('web')],
    ['other', clientRecord('other')],
    ['service', clientRecord('service', { grantTypes: ['client_credentials'], scopes: ['orders.read', 'orders.write'], displayName: 'Order service' })],
    // An automation client the administration API lets in.
    ['automation', clientRecord('automation', { grantTypes: ['client_credentials'], scopes: ['orders.read', 'admin_api'], displayName: 'CI' })],
    // For end session: a client with a post-logout redirect URI, and a disabled one.
    ['rp', clientRecord('rp', { postLogoutRedirectUris: [POST_LOGOUT_REDIRECT] })],
    ['disabled', clientRecord('disabled', { enabled: false })],
  ]);
  for (const record of clients.values()) await durable.clients.upsert(record);

  const addUser = async (username: string): Promise<UserRecord> => {
    const id = randomUUID();
    const given = username.charAt(0).toUpperCase() + username.slice(1);
    await durable.users.upsert({
      id, source: 'local', subject: id, username, passwordHash: null,
      givenName: given, familyName: 'Liddell', name: `${given} Liddell`, email: `${username}@example.com`, emailVerified: true,
      phoneNumber: null, phoneNumberVerified: false, roles: [],
      locked: false, mustChangePassword: false, mustEnrolMfa: false,
    });
    const created = await durable.users.getById(id);
    if (!created) throw new Error(`user ${username} not created`);
    return created;
  };
  const user = await addUser('alice');

  const audit: AuditEvent[] = [];
  const log: Audit = ({ type, ...fields }) => void audit.push({ event: type, fields });
  const deps: HarnessDeps = {
    issuer: ISSUER,
    clock,
    keys,
    codes: ephemeral.codes,
    revocations: createRevocationList({ durable, ephemeral }, clock),
    clients: durable.clients,
    users: durable.users,
    // Local accounts: the stored record is the current one.
    currentUser: async (u) => u,
    refreshTokens: durable.refreshTokens,
    refreshTokenCodec: createRefreshTokenCodec(Buffer.alloc(32, 2)),
    accessTokens: durable.accessTokens,
    refreshLifetime: options.refreshLifetime ?? { idleSeconds: 3600, absoluteSeconds: 4 * 3600 },
    refreshReuseGraceSeconds: options.graceSeconds ?? 10,
  };
  const grants = { code: createAuthorizationCodeGrant(deps), refresh: createRefreshTokenGrant(deps), clientCredentials: createClientCredentialsGrant(deps) };

  const client = (clientId: string): AuthenticatedClient => {
    const record = clients.get(clientId);
    if (!record) throw new Error(`no client ${clientId}`);
    return { client: record, method: 'client_secret_basic' };
  };

  return {
    durable, ephemeral, keys, deps, grants, log, audit, user, addUser,
    now: () => now,
    advance(seconds) {
      now += seconds * 1000;
    },
    client,
    async signIn({ clientId = 'web', scopes = ['openid', 'profile', 'offline_access'], userId = user.id } = {}) {
      const { verifier, challenge } = pkce();
      const record: CodeRecord = {
        userId, scopes, authTime: Math.floor(now / 1000), amr: ['pwd'], allowedScopes: scopes,
        clientId, redirectUri: REDIRECT, codeChallenge: challenge,
      };
      const code = await issueCode(ephemeral, record);
      const response = await grants.code.handle({ code, redirect_uri: REDIRECT, code_verifier: verifier }, client(clientId), log);
      if (!response.refresh_token) throw new Error('no refresh token issued');
      return response as TokenResponse & { refresh_token: string };
    },
    refresh(refreshToken, clientId = 'web', scope) {
      return grants.refresh.handle({ refresh_token: refreshToken, ...(scope !== undefined ? { scope } : {}) }, client(clientId), log);
    },
    async refreshState(refreshToken) {
      const found = await findRefreshToken(refreshToken, deps);
      return found ? { family: found.family, current: found.generation === found.family.generation } : undefined;
    },
    isRevoked: (accessToken) => isAccessTokenRevoked(deps.revocations, jwtPayload(accessToken)),
    async close() {
      await ephemeral.close();
      await durable.close();
    },
  };
}

/** The OAuth error code a promise rejects with, or 'ok' when it resolves. */
export async function outcome(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'ok';
  } catch (error) {
    if (error instanceof OAuthError) return error.code;
    throw error;
  }
}

export function jwtPayload(jwt: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
}
