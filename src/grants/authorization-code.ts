/**
 * RFC 6749 §4.1 with PKCE (RFC 7636): codes are issued at the end of an interaction and
 * redeemed at the token endpoint. Guard clauses first, then side effects. The code store
 * redeems a code once across instances; a second use is refused and revokes what the first
 * use issued (RFC 6749 §4.1.2, OAuth 2.0 Security BCP §4.5.3).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { z } from 'zod';
import { OAuthError } from '../errors.ts';
import type { Audit } from '../events/record.ts';
import type { ClientRecord, CodeRecord, IssuedFromCode } from '../store/records.ts';
import type { AccessTokenRepository, CodeStore, RefreshTokenRepository, UserRepository } from '../store/types.ts';
import { verifyPkce } from '../tokens/pkce.ts';
import type { RefreshTokenCodec } from '../tokens/refresh-tokens.ts';
import { revokedFamilyTokens, type RevocationList } from '../tokens/revocation-list.ts';
import { defineGrant, type Grant, type RefreshLifetime, type SigningDeps } from './common.ts';
import { assertUserMayReceiveTokens, mintUserTokens, type FamilyIssue } from './user-tokens.ts';

export interface AuthorizationCodeDeps extends SigningDeps {
  codes: Pick<CodeStore, 'redeem' | 'recordIssued'>;
  users: Pick<UserRepository, 'getById'>;
  refreshTokens: Pick<RefreshTokenRepository, 'createFamily' | 'revokeFamily'>;
  refreshTokenCodec: Pick<RefreshTokenCodec, 'issue' | 'accessJti'>;
  accessTokens: Pick<AccessTokenRepository, 'record'>;
  revocations: Pick<RevocationList, 'revoke'>;
  refreshLifetime: RefreshLifetime;
}

/** The deps of one redemption: the grant's, and the request's audit. */
type Redemption = AuthorizationCodeDeps & { audit: Audit };

const paramsSchema = z.object({
  code: z.string(),
  redirect_uri: z.string(),
  code_verifier: z.string(),
});

const invalidGrant = (detail: string) => new OAuthError('invalid_grant', 'The authorization code is invalid, expired or already used.', { detail });

export function createAuthorizationCodeGrant(grantDeps: AuthorizationCodeDeps): Grant {
  return defineGrant('authorization_code', paramsSchema, async (params, { client }, audit) => {
    const deps: Redemption = { ...grantDeps, audit };
    const redemption = await deps.codes.redeem(params.code);
    if (redemption.outcome === 'unknown') throw invalidGrant('unknown or expired code');
    if (redemption.outcome === 'replayed') {
      // What the first use issued is revoked now, or by the first use itself once it has it.
      if (redemption.issued) await revoke(redemption.issued, deps);
      throw invalidGrant('code used twice: what it issued is revoked');
    }
    const { record } = redemption;
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
    const recorded: IssuedFromCode = { jti: issued.jti, accessExpiresAt: issued.accessExpiresAt, familyId };
    // A replay that came in while this redemption was minting could not revoke what it issued.
    if (await deps.codes.recordIssued(params.code, recorded)) await revoke(recorded, deps);
    deps.audit({ type: 'token_issued', grant: 'authorization_code', client_id: client.clientId, user_id: user.id, refresh: familyId !== null });
    return issued.response;
  });
}

/** A refresh token only for a client with the refresh grant and a grant that holds offline_access (OpenID Connect Core 1.0 §11). */
function mayRefresh(client: ClientRecord, record: CodeRecord): boolean {
  return client.grantTypes.includes('refresh_token') && record.scopes.includes('offline_access');
}

/**
 * A new refresh token family at generation 0: its first token, and its row (written after
 * signing, with the expiry of the access token signed).
 */
function newFamily(record: CodeRecord, client: ClientRecord, now: number, deps: Redemption) {
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

async function revoke(issued: IssuedFromCode, deps: Redemption): Promise<void> {
  await deps.revocations.revoke([{ jti: issued.jti, exp: issued.accessExpiresAt }]);
  if (issued.familyId) {
    const revoked = await deps.refreshTokens.revokeFamily(issued.familyId, 'authorization code reused', new Date(deps.clock()));
    await deps.revocations.revoke(revokedFamilyTokens(revoked));
  }
  deps.audit({ type: 'code_reuse_detected', jti: issued.jti, family_id: issued.familyId });
}
