/**
 * The applications a user let in: each client holding a live refresh token family of theirs or
 * their consent, and removing one's access (its families and access tokens revoked, the
 * consent forgotten, so the next sign-in there asks again).
 */
import type { Clock } from '../clock.ts';
import type { UserSessionsDeps, Recording } from './sessions.ts';
import { recordedEnding } from './sessions.ts';
import { revokeUserClientTokens, type ClientTokenRevocationDeps } from '../sessions/end-session.ts';
import type { ClientsCache } from '../store/clients-cache.ts';
import type { ConsentRepository, RefreshTokenRepository } from '../store/types.ts';

export interface ApplicationsDeps extends ClientTokenRevocationDeps {
  clock: Clock;
  clients: Pick<ClientsCache, 'get'>;
  consents: Pick<ConsentRepository, 'listForUser' | 'revoke'>;
  refreshTokens: Pick<RefreshTokenRepository, 'listForUser' | 'revokeForUserAndClient'>;
}

export interface Application {
  clientId: string;
  displayName: string;
  /** The earliest of the consent and the live families. */
  since: Date;
  /** The last use of a live family (issue or rotation); null with a consent alone. */
  lastUsedAt: Date | null;
  /** The scopes consented to (empty when the client needs no consent). */
  scopes: string[];
}

/** Every client (still registered) with a live family of the user's or their consent, by display name. */
export async function listApplications(deps: Pick<ApplicationsDeps, 'clock' | 'clients' | 'consents' | 'refreshTokens'>, userId: string): Promise<Application[]> {
  const [families, consents] = await Promise.all([
    deps.refreshTokens.listForUser(userId, new Date(deps.clock())),
    deps.consents.listForUser(userId),
  ]);
  const byClient = new Map<string, { since: Date; lastUsedAt: Date | null; scopes: string[] }>();
  const earlier = (a: Date, b: Date) => (a < b ? a : b);
  for (const consent of consents) byClient.set(consent.clientId, { since: consent.grantedAt, lastUsedAt: null, scopes: consent.scopes });
  for (const family of families) {
    const seen = byClient.get(family.clientId);
    const lastUsedAt = seen?.lastUsedAt && seen.lastUsedAt > family.lastUsedAt ? seen.lastUsedAt : family.lastUsedAt;
    byClient.set(family.clientId, { since: seen ? earlier(seen.since, family.createdAt) : family.createdAt, lastUsedAt, scopes: seen?.scopes ?? [] });
  }
  const listed = await Promise.all([...byClient].map(async ([clientId, use]) => {
    const client = await deps.clients.get(clientId);
    return client ? [{ clientId, displayName: client.displayName, ...use }] : [];
  }));
  return listed.flat().sort((a, b) => a.displayName.localeCompare(b.displayName) || (a.clientId < b.clientId ? -1 : 1));
}

/**
 * Revokes the client's families and access tokens for the user and forgets their consent, in
 * one transaction with the events `recording` makes.
 */
export async function removeApplicationAccess(deps: Pick<UserSessionsDeps, 'clock' | 'durable' | 'revocations'>, userId: string, clientId: string, recording: Recording<void>): Promise<void> {
  await recordedEnding(deps, recording, async (tokens) => {
    await revokeUserClientTokens(tokens, userId, [clientId], 'access removed');
    await tokens.tx.consents.revoke(userId, clientId);
  });
}
