/**
 * GET and POST /connect/userinfo (OIDC Core §5.3): the user's claims for a Bearer access token
 * (RFC 6750 §2.1, header only), limited to the token's scopes plus the `userinfo` claims the
 * claims parameter asked for. `role` is always an array here.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { epochSeconds, type Clock } from '../clock.ts';
import { OAuthError } from '../errors.ts';
import type { ClientsCache } from '../store/clients-cache.ts';
import type { UserRepository } from '../store/types.ts';
import { userClaims } from '../tokens/claims.ts';
import { verifyJwt } from '../tokens/jwt.ts';
import type { KeyManager } from '../tokens/keys.ts';
import { isAccessTokenRevoked, type RevocationList } from '../tokens/revocation.ts';
import { assertOriginAllowed } from './shared/client-auth.ts';

export interface UserinfoRouteOptions {
  issuer: string;
  clock: Clock;
  keys: KeyManager;
  revocations: RevocationList;
  users: Pick<UserRepository, 'getById'>;
  clients: ClientsCache;
}

const invalidToken = (detail: string) => new OAuthError('invalid_token', 'The access token is missing, invalid, expired or revoked.', { detail });

function bearerToken(request: FastifyRequest): string {
  const match = /^Bearer ([A-Za-z0-9._~+/-]+=*)$/i.exec(request.headers.authorization ?? '');
  if (!match?.[1]) throw invalidToken('no Bearer token in the Authorization header');
  return match[1];
}

export async function userinfoRoutes(app: FastifyInstance, options: UserinfoRouteOptions): Promise<void> {
  const { issuer, clock, keys, revocations, users, clients } = options;

  async function userinfo(request: FastifyRequest, reply: FastifyReply): Promise<Record<string, unknown>> {
    const payload = await verifyJwt(keys, 'access', bearerToken(request), { issuer, now: epochSeconds(clock) });
    if (!payload) throw invalidToken('token does not verify');
    // Client credentials tokens name no user.
    if (typeof payload.svc_uid !== 'string') throw invalidToken('not a user access token');
    // Independent lookups, asked together.
    const [revoked, user] = await Promise.all([
      isAccessTokenRevoked(revocations, payload),
      users.getById(payload.svc_uid),
    ]);
    if (revoked) throw invalidToken('token revoked');
    if (request.headers.origin !== undefined) {
      const client = typeof payload.client_id === 'string' ? await clients.get(payload.client_id) : undefined;
      if (!client) throw invalidToken('client of the token is gone');
      assertOriginAllowed(request, reply, client);
    }
    if (!user || user.locked) throw invalidToken('user removed or locked');
    const scopes = typeof payload.scope === 'string' ? payload.scope.split(' ') : [];
    if (!scopes.includes('openid')) throw new OAuthError('insufficient_scope', 'The access token was not granted the openid scope.');
    const extra = Array.isArray(payload.svc_userinfo) ? payload.svc_userinfo.filter((c): c is string => typeof c === 'string') : [];
    return { sub: user.subject, ...userClaims(user, { scopes, extra, idp: user.source, roleShape: 'userinfo' }) };
  }

  const config = { challenge: 'Bearer' as const };
  for (const method of ['GET', 'POST'] as const) {
    app.route({
      method,
      url: '/connect/userinfo',
      config,
      handler: async (request, reply) => reply.header('cache-control', 'no-store').send(await userinfo(request, reply)),
    });
  }
}
