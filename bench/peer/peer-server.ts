/**
 * The peer: node-oidc-provider v9 with a Redis adapter, configured as close to this service's protocol as
 * it allows: RS256 (an RSA-2048 key), the service's paths, client_secret_basic, PKCE S256
 * required, JWT access tokens for client credentials (a resource server with
 * `accessTokenFormat: 'jwt'`), opaque access tokens for the code flow (it introspects only
 * opaque tokens), refresh tokens rotated on every use. The bench's clients (bench/prepare.ts).
 *
 * The interaction (login and consent) is this file's `/interaction/:uid`: it signs the bench
 * user in and grants every scope asked for, through the provider's own interactionFinished, so
 * codes and refresh tokens come from its real flow. Started by bench/peer.ts with PEER_PORT and
 * PEER_REDIS_URL (keys under `idp:peer:`, which the bench removes with the service's).
 */
import { generateKeyPairSync } from 'node:crypto';
import { createServer } from 'node:http';
import { Redis } from 'ioredis';
import Provider, { type Configuration } from 'oidc-provider';
import { SERVICE, USER, WEB } from '../prepare.ts';
import { redisAdapterClass } from './redis-adapter.ts';

const port = Number(process.env.PEER_PORT ?? 0);
const issuer = `http://127.0.0.1:${port}`;
const API = 'https://api.bench';
const redis = new Redis(process.env.PEER_REDIS_URL ?? 'redis://127.0.0.1:6379', { keyPrefix: 'idp:peer:' });
const signingKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });

const configuration: Configuration = {
  adapter: redisAdapterClass(redis),
  jwks: { keys: [{ ...signingKey, kid: 'peer-key', alg: 'RS256', use: 'sig' }] as never },
  cookies: { keys: ['bench-peer-cookie-key-0123456789abcdef'] },
  clients: [
    {
      client_id: WEB.clientId, client_secret: WEB.secret, redirect_uris: [WEB.redirectUri],
      grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'client_secret_basic',
    },
    {
      client_id: SERVICE.clientId, client_secret: SERVICE.secret, redirect_uris: [], response_types: [],
      grant_types: ['client_credentials'], token_endpoint_auth_method: 'client_secret_basic', scope: SERVICE.scope,
    },
  ],
  scopes: ['openid', 'offline_access', 'profile', 'email', SERVICE.scope],
  claims: { openid: ['sub'], profile: ['name', 'given_name', 'family_name'], email: ['email', 'email_verified'] },
  findAccount: (_ctx, sub) => Promise.resolve({
    accountId: sub,
    claims: () => ({ sub, name: 'Bench User', given_name: 'Bench', family_name: 'User', email: `${sub}@example.com`, email_verified: true }),
  }),
  routes: {
    authorization: '/connect/authorize', token: '/connect/token', introspection: '/connect/introspect',
    userinfo: '/connect/userinfo', jwks: '/.well-known/jwks', revocation: '/connect/revoke', end_session: '/connect/logout',
  },
  pkce: { required: () => true },
  rotateRefreshToken: true,
  // This service issues a refresh token for offline_access; the provider would also ask for prompt=consent.
  issueRefreshToken: (_ctx, client, code) => Promise.resolve(client.grantTypeAllowed('refresh_token') && code.scopes.has('offline_access')),
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    // As this service does, introspection answers only the client the token was issued to.
    introspection: { enabled: true, allowedPolicy: (_ctx, client, token) => Promise.resolve(token.clientId === client.clientId) },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      // Client credentials get a JWT for the API; the code flow keeps opaque tokens (userinfo, introspection).
      defaultResource: (_ctx, client) => Promise.resolve(client.clientId === SERVICE.clientId ? API : undefined as unknown as string),
      useGrantedResource: () => Promise.resolve(true),
      getResourceServerInfo: () => Promise.resolve({ scope: SERVICE.scope, audience: API, accessTokenFormat: 'jwt', accessTokenTTL: 3600, jwt: { sign: { alg: 'RS256' } } }),
    },
  },
  ttl: { AccessToken: 3600, AuthorizationCode: 300, IdToken: 3600, RefreshToken: 30 * 24 * 3600, ClientCredentials: 3600, Interaction: 600, Session: 24 * 3600, Grant: 30 * 24 * 3600 },
  interactions: { url: (_ctx, interaction) => Promise.resolve(`/interaction/${interaction.uid}`) },
};

const provider = new Provider(issuer, configuration);
const callback = provider.callback();

/** Login and consent in one step: the bench user, every scope asked for. */
async function finishInteraction(req: Parameters<typeof callback>[0], res: Parameters<typeof callback>[1]): Promise<void> {
  const details = await provider.interactionDetails(req, res);
  const accountId = details.session?.accountId ?? USER.username;
  const grant = details.grantId ? await provider.Grant.find(details.grantId) : new provider.Grant({ accountId, clientId: String(details.params.client_id) });
  if (!grant) throw new Error('grant vanished');
  grant.addOIDCScope(String(details.params.scope));
  const grantId = await grant.save();
  await provider.interactionFinished(req, res, { login: { accountId }, consent: { grantId } }, { mergeWithLastSubmission: false });
}

const server = createServer((req, res) => {
  if (req.url?.startsWith('/interaction/')) {
    finishInteraction(req, res).catch((error: unknown) => {
      res.statusCode = 500;
      res.end(String(error));
    });
    return;
  }
  void callback(req, res);
}).listen(port, '127.0.0.1');
// An orderly exit on SIGTERM, so that --cpu-prof writes its profile.
process.once('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => void redis.quit().finally(() => process.exit(0)));
});
