/**
 * Client authentication at the token, introspection and revocation endpoints (RFC 6749 §2.3):
 * `client_secret_basic`, `client_secret_post`, or a public client naming itself by `client_id`.
 */
import { OAuthError } from '../errors.ts';
import { isClientId, type ClientRecord } from '../store/records.ts';
import { verifyClientSecret } from '../tokens/opaque.ts';

export type AuthMethod = 'client_secret_basic' | 'client_secret_post' | 'none';

export interface ClientCredentialsInput {
  /** The raw Authorization header, if any. */
  authorization: string | undefined;
  clientId: string | undefined;
  clientSecret: string | undefined;
}

export interface AuthenticatedClient {
  client: ClientRecord;
  method: AuthMethod;
}

/** Why client authentication failed, for the audit log (the client is only told invalid_client). */
export type ClientAuthFailure =
  | 'no_credentials' | 'malformed_credentials' | 'unknown_client' | 'disabled' | 'bad_secret' | 'expired_secret';

export interface ClientAuthDeps {
  findClient(clientId: string): Promise<ClientRecord | undefined>;
  /** Milliseconds since the epoch. */
  now: number;
  /** Told why authentication failed, and which client id was presented, before the error is thrown. */
  failed?(reason: ClientAuthFailure, clientId: string | undefined): void;
}

const invalidClient = (detail: string) => new OAuthError('invalid_client', 'Client authentication failed.', { detail });

/** RFC 6749 §2.3.1: the id and the secret are form-urlencoded before Basic encoding. */
function formDecode(value: string): string {
  return decodeURIComponent(value.replace(/\+/g, ' '));
}

interface BasicCredentials {
  clientId: string;
  /** The secret form-decoded (RFC 6749 §2.3.1), or undefined when it is not form-encoded. */
  clientSecret: string | undefined;
  /** The secret exactly as sent, when that differs from the decoded one (always, when that failed). */
  rawSecret: string | undefined;
}

function parseBasic(header: string): BasicCredentials {
  const match = /^Basic ([A-Za-z0-9+/]+={0,2})$/i.exec(header.trim());
  if (!match?.[1]) throw invalidClient('malformed Basic authorization header');
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) throw invalidClient('Basic credentials without a colon');
  let clientId: string;
  try {
    clientId = formDecode(decoded.slice(0, colon));
  } catch {
    throw invalidClient('Basic credentials are not form-urlencoded');
  }
  // Client ids are visible ASCII (the clients table's rule): anything else, a NUL above all,
  // names no client and must not reach the database.
  if (!isClientId(clientId)) throw invalidClient('Basic credentials name no possible client id');
  const raw = decoded.slice(colon + 1);
  let clientSecret: string | undefined;
  try {
    clientSecret = formDecode(raw);
  } catch {
    clientSecret = undefined;
  }
  return { clientId, clientSecret, rawSecret: raw !== clientSecret ? raw : undefined };
}

/** Which method the request uses, refusing requests that use two at once (RFC 6749 §2.3). */
function presentedCredentials(input: ClientCredentialsInput): { method: AuthMethod; clientId: string; secret?: string; rawSecret?: string } {
  const basic = input.authorization && /^basic /i.test(input.authorization) ? parseBasic(input.authorization) : undefined;
  if (basic) {
    if (input.clientSecret !== undefined) {
      throw new OAuthError('invalid_request', 'The client used more than one authentication method.');
    }
    if (input.clientId !== undefined && input.clientId !== basic.clientId) {
      throw new OAuthError('invalid_request', 'The client_id parameter does not match the authenticated client.');
    }
    return { method: 'client_secret_basic', clientId: basic.clientId, secret: basic.clientSecret ?? basic.rawSecret, rawSecret: basic.rawSecret };
  }
  if (input.clientId === undefined) throw invalidClient('no client authentication');
  if (input.clientSecret !== undefined) return { method: 'client_secret_post', clientId: input.clientId, secret: input.clientSecret };
  return { method: 'none', clientId: input.clientId };
}

/**
 * RFC 6749 §2.3.1 form-decodes a Basic secret, but several widespread client libraries send it
 * raw, so a base64 secret's `+` would arrive as a space. When the decoded secret does not match
 * and the raw one differs, the raw one is tried too; each comparison is constant-time.
 */
function secretMatches(presented: { secret?: string; rawSecret?: string }, secretHash: string): boolean {
  if (presented.secret !== undefined && verifyClientSecret(presented.secret, secretHash)) return true;
  return presented.rawSecret !== undefined && presented.rawSecret !== presented.secret && verifyClientSecret(presented.rawSecret, secretHash);
}

export async function authenticateClient(input: ClientCredentialsInput, deps: ClientAuthDeps): Promise<AuthenticatedClient> {
  const refuse = (reason: ClientAuthFailure, clientId: string | undefined, detail: string) => {
    deps.failed?.(reason, clientId);
    return invalidClient(detail);
  };
  let presented: ReturnType<typeof presentedCredentials>;
  try {
    presented = presentedCredentials(input);
  } catch (error) {
    if (error instanceof OAuthError && error.code === 'invalid_client') {
      const none = input.authorization === undefined && input.clientId === undefined;
      deps.failed?.(none ? 'no_credentials' : 'malformed_credentials', input.clientId);
    }
    throw error;
  }
  const { clientId } = presented;
  const client = await deps.findClient(clientId);
  if (!client) throw refuse('unknown_client', clientId, `unknown client ${clientId}`);
  if (!client.enabled) throw refuse('disabled', clientId, `client ${clientId} is disabled`);
  if (client.secretHash === null) {
    // A public client holds no secret; one that sends a secret is not who it claims to be.
    if (presented.method !== 'none') throw refuse('bad_secret', clientId, `public client ${clientId} sent a secret`);
    return { client, method: 'none' };
  }
  if (presented.secret === undefined) throw refuse('bad_secret', clientId, `confidential client ${clientId} sent no secret`);
  if (!secretMatches(presented, client.secretHash)) {
    // Only once the current secret failed: the common case costs nothing more.
    const previous = previousSecretMatch(presented, client, deps.now);
    if (previous === 'valid') return { client, method: presented.method };
    if (previous === 'expired') throw refuse('expired_secret', clientId, `previous secret of ${clientId} expired at ${client.previousSecret?.expiresAt.toISOString()}`);
    throw refuse('bad_secret', clientId, `wrong secret for ${clientId}`);
  }
  if (client.secretExpiresAt && client.secretExpiresAt.getTime() <= deps.now) {
    throw refuse('expired_secret', clientId, `secret of ${clientId} expired at ${client.secretExpiresAt.toISOString()}`);
  }
  return { client, method: presented.method };
}

/**
 * The secret a rotation kept (`idp clients rotate-secret --keep-old-for`) is accepted until its
 * expiry; after it, it is told apart from a wrong secret for the audit log only.
 */
function previousSecretMatch(presented: { secret?: string; rawSecret?: string }, client: ClientRecord, now: number): 'valid' | 'expired' | 'no' {
  const previous = client.previousSecret;
  if (!previous || !secretMatches(presented, previous.hash)) return 'no';
  return previous.expiresAt.getTime() > now ? 'valid' : 'expired';
}
