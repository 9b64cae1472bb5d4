/**
 * The floor server: the smallest work each scenario must do on this machine, with the service's
 * own client authentication, signing and password code (service-code.ts) and no storage, behind
 * Fastify + @fastify/formbody as the service is. It answers the service's paths, so the
 * scenarios' requests run unchanged against it:
 *
 * - `POST /connect/token` client_credentials: client authentication, one signature;
 *   authorization_code and refresh_token: client authentication, two signatures (access and ID
 *   token) and a new random refresh token (the code or refresh token sent is not looked up);
 * - `POST /connect/introspect`: client authentication, one JWT verification;
 * - `GET /connect/userinfo`: one JWT verification;
 * - the sign-in: `GET /connect/authorize` (303 and a cookie), `GET /floor/sign-in` (a page with a
 *   form and a CSRF token), `POST /floor/sign-in` (one argon2id verification with the service's
 *   parameters, 302 to the client with a code).
 *
 * Started by bench/floors.ts as `node <flags of npm start> bench/floors/floor-server.ts` with
 * FLOOR_PORT; clients and the user are bench/prepare.ts's.
 */
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import formbody from '@fastify/formbody';
import Fastify from 'fastify';
import { SERVICE, SIGN_IN_USER, WEB } from '../prepare.ts';
import {
  authenticateClient, hashClientSecret, hashPassword, randomToken, signJwt, verifyJwt, verifyPassword, type ClientRecord, type KeyManager,
} from './service-code.ts';

const port = Number(process.env.FLOOR_PORT ?? 0);
const issuer = `http://127.0.0.1:${port}`;
const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const KID = 'floor-key';
// Only what signJwt and verifyJwt use of the key manager: an in-memory key, no store.
const keys = {
  signer: () => Promise.resolve({ kid: KID, key: privateKey }),
  verificationKey: (kid: string) => Promise.resolve(kid === KID ? publicKey : undefined),
} as unknown as KeyManager;

function client(clientId: string, secret: string, scopes: string[]): ClientRecord {
  return {
    clientId, displayName: clientId, enabled: true, secretHash: hashClientSecret(secret), secretExpiresAt: null,
    grantTypes: ['authorization_code', 'refresh_token', 'client_credentials'], scopes, redirectUris: [WEB.redirectUri],
    postLogoutRedirectUris: [], corsOrigins: [], accessTokenLifetime: 3600, requireConsent: false,
  };
}
const CLIENTS = new Map([
  [WEB.clientId, client(WEB.clientId, WEB.secret, ['openid', 'profile', 'email', 'offline_access'])],
  [SERVICE.clientId, client(SERVICE.clientId, SERVICE.secret, [SERVICE.scope])],
]);
const passwordHash = await hashPassword(SIGN_IN_USER.password);
const userId = randomUUID();

type Form = Record<string, string | undefined>;
const authenticate = (authorization: string | undefined, body: Form) =>
  authenticateClient({ authorization, clientId: body.client_id, clientSecret: body.client_secret }, {
    findClient: (id) => Promise.resolve(CLIENTS.get(id)), now: Date.now(),
  });

/** Claims shaped as the service's user tokens (src/grants/user-tokens.ts). */
function userTokenClaims(clientId: string, iat: number) {
  return {
    iss: issuer, sub: userId, iat, exp: iat + 3600, name: 'Bench User 2', given_name: 'Bench', family_name: 'User 2',
    email: 'bench-signin@example.com', email_verified: true,
    roles: ['viewer'], client_id: clientId,
  };
}

const app = Fastify({ logger: false, bodyLimit: 64 * 1024 });
await app.register(formbody);

app.post('/connect/token', async (request, reply) => {
  const body = request.body as Form;
  const { client: c } = await authenticate(request.headers.authorization, body);
  const iat = Math.floor(Date.now() / 1000);
  if (body.grant_type === 'client_credentials') {
    const token = await signJwt(keys, 'access', { iss: issuer, sub: c.clientId, iat, exp: iat + 3600, jti: randomUUID(), client_id: c.clientId, scope: SERVICE.scope, name: c.displayName });
    return reply.header('cache-control', 'no-store').send({ access_token: token, token_type: 'Bearer', expires_in: 3600, scope: SERVICE.scope });
  }
  const claims = userTokenClaims(c.clientId, iat);
  const scope = 'openid profile email offline_access';
  const [accessToken, idToken] = await Promise.all([
    signJwt(keys, 'access', { ...claims, jti: randomUUID(), scope, svc_uid: userId }),
    signJwt(keys, 'id', { ...claims, aud: c.clientId, auth_time: iat, amr: ['pwd'], acr: '0' }),
  ]);
  return reply.header('cache-control', 'no-store').send({
    access_token: accessToken, token_type: 'Bearer', expires_in: 3600, scope, id_token: idToken, refresh_token: randomToken(),
  });
});

app.post('/connect/introspect', async (request, reply) => {
  const body = request.body as Form;
  const { client: c } = await authenticate(request.headers.authorization, body);
  const payload = await verifyJwt(keys, 'access', body.token ?? '', { issuer, now: Math.floor(Date.now() / 1000) });
  if (!payload || payload.client_id !== c.clientId) return reply.send({ active: false });
  return reply.send({ active: true, iss: issuer, sub: payload.sub, client_id: c.clientId, scope: payload.scope, token_type: 'Bearer', iat: payload.iat, exp: payload.exp });
});

app.get('/connect/userinfo', async (request, reply) => {
  const token = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1] ?? '';
  const payload = await verifyJwt(keys, 'access', token, { issuer, now: Math.floor(Date.now() / 1000) });
  if (!payload) return reply.code(401).send({ error: 'invalid_token' });
  return reply.send({ sub: payload.sub, name: payload.name, email: payload.email, email_verified: payload.email_verified });
});

app.get('/connect/authorize', (_request, reply) =>
  reply.code(303).header('set-cookie', `floor_session=${randomToken()}; Path=/; HttpOnly; SameSite=Lax`).header('location', '/floor/sign-in').send());

app.get('/floor/sign-in', (_request, reply) =>
  reply.type('text/html; charset=utf-8').send(`<!doctype html><html lang="en"><head><title>Sign in</title></head><body><main><h1>Sign in</h1>
<form method="post" action="/floor/sign-in"><input type="hidden" name="csrf" value="${randomToken()}">
<label>Username <input name="username" autocomplete="username"></label><label>Password <input type="password" name="password"></label>
<button type="submit">Sign in</button></form></main></body></html>`));

app.post('/floor/sign-in', async (request, reply) => {
  const body = request.body as Form;
  if (body.username !== SIGN_IN_USER.username || !(await verifyPassword(passwordHash, body.password ?? ''))) return reply.code(401).send('no');
  return reply.code(302).header('location', `${WEB.redirectUri}?code=${randomToken()}&state=bench-state`).send();
});

await app.listen({ port, host: '127.0.0.1' });
// An orderly exit on SIGTERM, so that --cpu-prof writes its profile.
process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
