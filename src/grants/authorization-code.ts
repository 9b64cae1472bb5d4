/**
 * RFC 6749 §4.1 with PKCE (RFC 7636): codes are issued at the end of an interaction and
 * redeemed at the token endpoint. Guard clauses first, then side effects. A code is consumed
 * atomically (single use across instances); a second use is refused and revokes what the
 * first use issued (RFC 6749 §4.1.2, OAuth 2.0 Security BCP §4.5.3).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { z } from 'zod';
import { OAuthError } from '../errors.ts';
import type { Audit } from '../protocol/audit.ts';
import type { AccessTokenRepository, ClientRecord, EphemeralStore, EphemeralWrite, RefreshTokenRepository, UserRepository } from '../store/types.ts';
import { hashToken, randomToken } from '../tokens/opaque.ts';
import { verifyPkce } from '../tokens/pkce.ts';
import type { RefreshTokenCodec } from '../tokens/refresh-tokens.ts';
import { revokedFamilyTokens, type RevocationList } from '../tokens/revocation.ts';
import { defineGrant, type Grant, type RefreshLifetime, type SigningDeps } from './common.ts';
import { assertUserMayReceiveTokens, mintUserTokens, type Authorization, type FamilyIssue } from './user-tokens.ts';

/** interface.md: a code is valid for 5 minutes. */
export const CODE_TTL_SECONDS = 300;

export interface CodeRecord extends Authorization {
  clientId: string;
  redirectUri: string;
  codeChallenge: string;
}

/** What the first redemption issued, so that a second one can revoke it. */
interface IssuedFromCode {
  jti: string;
  accessExpiresAt: number;
  familyId: string | null;
}

const NS = { code: 'code', issued: 'code-issued', reused: 'code-reused' } as const;

/** A new code, with the write that stores its record under the code's hash (for the caller to send). */
export function newCode(record: CodeRecord): { code: string; write: EphemeralWrite } {
  const code = randomToken();
  return { code, write: { op: 'set', ns: NS.code, key: hashToken(code), value: record, ttlSeconds: CODE_TTL_SECONDS } };
}

export interface AuthorizationCodeDeps extends SigningDeps {
  ephemeral: EphemeralStore;
  users: Pick<UserRepository, 'getById'>;
  refreshTokens: Pick<RefreshTokenRepository, 'createFamily' | 'revokeFamily'>;
  refreshTokenCodec: Pick<RefreshTokenCodec, 'issue' | 'accessJti'>;
  accessTokens: Pick<AccessTokenRepository, 'record'>;
  revocations: Pick<RevocationList, 'revoke'>;
  refreshLifetime: RefreshLifetime;
}

/** The deps of one redemption: the grant's, and the request's audit. */
type Redemption = AuthorizationCodeDeps & { audit: Audit };

/** Stores a code record under the code's hash and returns the code. */
export async function issueCode(deps: Pick<AuthorizationCodeDeps, 'ephemeral'>, record: CodeRecord): Promise<string> {
  const { code, write } = newCode(record);
  await deps.ephemeral.write([write]);
  return code;
}

const paramsSchema = z.object({
  code: z.string(),
  redirect_uri: z.string(),
  code_verifier: z.string(),
});

const invalidGrant = (detail: string) => new OAuthError('invalid_grant', 'The authorization code is invalid, expired or already used.', { detail });

export function createAuthorizationCodeGrant(grantDeps: AuthorizationCodeDeps): Grant {
  return defineGrant('authorization_code', paramsSchema, async (params, { client }, audit) => {
    const deps: Redemption = { ...grantDeps, audit };
    const codeHash = hashToken(params.code);
    const consumed = await deps.ephemeral.consume<CodeRecord>(NS.code, codeHash);
    if (!consumed) throw invalidGrant('unknown or expired code');
    if (!consumed.firstUse) {
      await revokeIssuedFromCode(codeHash, deps);
      throw invalidGrant('code used twice: what it issued is revoked');
    }
    const record = consumed.value;
    if (record.clientId !== client.clientId) throw invalidGrant(`code of ${record.clientId} redeemed by ${client.clientId}`);
    // RFC 6749 §4.1.3: redirect_uri must be identical to the one of the authorization request.
    if (record.redirectUri !== params.redirect_uri) throw invalidGrant('redirect_uri differs from the authorization request');
    if (!verifyPkce(params.code_verifier, record.codeChallenge)) throw invalidGrant('code_verifier does not match the code_challenge');
    const user = await deps.users.getById(record.userId);
    assertUserMayReceiveTokens(user);

    const now = deps.clock();
    const family = mayRefresh(client, record) ? newFamily(record, client, now, deps) : undefined;
    const issued = await mintUserTokens(user, client, record, deps, family?.issue);
    const accessExpiresAt = new Date(issued.accessExpiresAt * 1000);
    if (family) {
      await deps.refreshTokens.createFamily({ ...family.row, accessExpiresAt });
    } else {
      // Without a family, the access token is recorded on its own: end session revokes it too.
      await deps.accessTokens.record(user.id, client.clientId, { jti: issued.jti, expiresAt: accessExpiresAt }, new Date(now));
    }
    const familyId = family?.issue.familyId ?? null;
    await recordIssued(codeHash, { jti: issued.jti, accessExpiresAt: issued.accessExpiresAt, familyId }, deps);
    deps.audit('token_issued', { grant: 'authorization_code', client_id: client.clientId, user_id: user.id, refresh: familyId !== null });
    return issued.response;
  });
}

/** interface.md: a refresh token only with the refresh grant and offline_access. */
function mayRefresh(client: ClientRecord, record: CodeRecord): boolean {
  return client.grantTypes.includes('refresh_token') && record.scopes.includes('offline_access');
}

/**
 * A new refresh token family at generation 0: its first token, and its row (written after
 * signing, with the expiry of the access token signed).
 */
function newFamily(record: CodeRecord, client: ClientRecord, now: number, deps: AuthorizationCodeDeps) {
  const familyId = randomUUID();
  const tokenSalt = randomBytes(32);
  const issue: FamilyIssue = {
    familyId,
    refreshToken: deps.refreshTokenCodec.issue(familyId, 0, tokenSalt),
    jti: deps.refreshTokenCodec.accessJti(familyId, 0),
  };
  const row = {
    id: familyId,
    clientId: client.clientId,
    userId: record.userId,
    scopes: record.scopes,
    claims: record.claims ?? null,
    allowedScopes: record.allowedScopes,
    nonce: record.nonce ?? null,
    authTime: new Date(record.authTime * 1000),
    amr: record.amr,
    expiresAt: new Date(now + deps.refreshLifetime.absoluteSeconds * 1000),
    tokenSalt,
    tokenExpiresAt: new Date(now + deps.refreshLifetime.idleSeconds * 1000),
  };
  return { issue, row };
}

/**
 * Remembers what the first redemption issued. If a second redemption came in while the first
 * was minting, it left a mark instead; then the first revokes its own tokens now.
 */
async function recordIssued(codeHash: string, issued: IssuedFromCode, deps: Redemption): Promise<void> {
  // Sent together: one connection keeps them in this order, in one round trip.
  const [, reused] = await Promise.all([
    deps.ephemeral.set(NS.issued, codeHash, issued, CODE_TTL_SECONDS),
    deps.ephemeral.get(NS.reused, codeHash),
  ]);
  if (reused) await revoke(issued, deps);
}

async function revokeIssuedFromCode(codeHash: string, deps: Redemption): Promise<void> {
  const issued = await deps.ephemeral.get<IssuedFromCode>(NS.issued, codeHash);
  if (issued) await revoke(issued, deps);
  else await deps.ephemeral.set(NS.reused, codeHash, 1, CODE_TTL_SECONDS);
}

async function revoke(issued: IssuedFromCode, deps: Redemption): Promise<void> {
  await deps.revocations.revoke([{ jti: issued.jti, exp: issued.accessExpiresAt }]);
  if (issued.familyId) {
    const revoked = await deps.refreshTokens.revokeFamily(issued.familyId, 'authorization code reused', new Date(deps.clock()));
    await deps.revocations.revoke(revokedFamilyTokens(revoked));
  }
  deps.audit('code_reuse_detected', { jti: issued.jti, family_id: issued.familyId });
}
