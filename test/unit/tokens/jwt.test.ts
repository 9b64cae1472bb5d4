/**
 * The service's own JWTs, signed and verified with node:crypto: interoperable with jose both
 * ways, and every rule of verification refuses what it must.
 */
import { createPublicKey, generateKeyPairSync, sign } from 'node:crypto';
import { createLocalJWKSet, jwtVerify, SignJWT, type JWTPayload } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openMigratedEmbedded } from '../../helpers/embedded-database.ts';
import type { DurableStore } from '../../../src/store/types.ts';
import { signJwt, verifyJwt, type TokenKind } from '../../../src/tokens/jwt.ts';
import { createKeyManager, type KeyManager } from '../../../src/tokens/keys.ts';

const ISSUER = 'https://id.example.test';
const NOW = 1_800_000_000;

describe('JWTs of the service', () => {
  let durable: DurableStore;
  let keys: KeyManager;
  let kid: string;

  const claims = (extra: JWTPayload = {}): JWTPayload => ({ iss: ISSUER, sub: 'ada', iat: NOW, exp: NOW + 300, jti: 'j-1', ...extra });
  const verify = (token: string, kind: TokenKind = 'access', now = NOW, allowExpired = false) =>
    verifyJwt(keys, kind, token, { issuer: ISSUER, now, allowExpired });
  /** A token signed by jose with the service's own current key and the header given. */
  const joseSigned = async (payload: JWTPayload, header: Record<string, unknown>) =>
    new SignJWT(payload).setProtectedHeader({ alg: 'RS256', kid, typ: 'at+jwt', ...header }).sign((await keys.signer()).key);

  /** A token put together by hand, signed with the current key: header and payload as given. */
  const handSigned = async (header: Record<string, unknown>, payload: unknown) => {
    const input = [header, payload].map((part) => Buffer.from(JSON.stringify(part)).toString('base64url')).join('.');
    return `${input}.${sign('sha256', Buffer.from(input), (await keys.signer()).key).toString('base64url')}`;
  };

  beforeAll(async () => {
    durable = await openMigratedEmbedded();
    keys = createKeyManager({ keys: durable.signingKeys, kek: Buffer.alloc(32, 7), clock: () => NOW * 1000 });
    await keys.ensureSigningKey();
    kid = (await keys.signer()).kid;
  });
  afterAll(async () => {
    await durable.close();
  });

  it('signs what jose verifies against the published key set, with alg, kid and typ in the header', async () => {
    const token = await signJwt(keys, 'access', claims());
    const { payload, protectedHeader } = await jwtVerify(token, createLocalJWKSet(await keys.jwks()), {
      issuer: ISSUER, typ: 'at+jwt', algorithms: ['RS256'], currentDate: new Date(NOW * 1000),
    });
    expect(protectedHeader).toStrictEqual({ alg: 'RS256', kid, typ: 'at+jwt' });
    expect(payload).toStrictEqual(claims());
    const id = await signJwt(keys, 'id', claims({ aud: 'web' }));
    expect((await jwtVerify(id, createLocalJWKSet(await keys.jwks()), { currentDate: new Date(NOW * 1000) })).protectedHeader.typ).toBe('JWT');
  });

  it('verifies what jose signed with the current key, and returns its claims', async () => {
    expect(await verify(await joseSigned(claims({ scope: 'openid' }), {}))).toStrictEqual(claims({ scope: 'openid' }));
  });

  it('refuses an ID token as an access token and the other way round', async () => {
    expect(await verify(await signJwt(keys, 'id', claims()), 'access')).toBeUndefined();
    expect(await verify(await signJwt(keys, 'access', claims()), 'id')).toBeUndefined();
  });

  it('refuses a token at its expiry, unless expired tokens are allowed', async () => {
    const token = await signJwt(keys, 'access', claims());
    expect(await verify(token, 'access', NOW + 299)).toBeDefined();
    expect(await verify(token, 'access', NOW + 300)).toBeUndefined();
    expect(await verify(token, 'access', NOW + 10_000, true)).toBeDefined();
  });

  it('refuses another issuer, a missing exp and a token not valid yet', async () => {
    expect(await verify(await signJwt(keys, 'access', claims({ iss: 'https://other.example.test' })))).toBeUndefined();
    expect(await verify(await signJwt(keys, 'access', { iss: ISSUER, sub: 'ada' }))).toBeUndefined();
    expect(await verify(await signJwt(keys, 'access', claims({ nbf: NOW + 60 })))).toBeUndefined();
    expect(await verify(await signJwt(keys, 'access', claims({ nbf: NOW - 60 })))).toBeDefined();
  });

  it('refuses a changed payload, a changed signature and a foreign key under a published kid', async () => {
    const [header, payload, signature] = (await signJwt(keys, 'access', claims())).split('.') as [string, string, string];
    const forged = Buffer.from(JSON.stringify(claims({ sub: 'eve' }))).toString('base64url');
    expect(await verify(`${header}.${forged}.${signature}`)).toBeUndefined();
    const flipped = `${signature[0] === 'A' ? 'B' : 'A'}${signature.slice(1)}`;
    expect(await verify(`${header}.${payload}.${flipped}`)).toBeUndefined();
    const stranger = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    const foreign = await new SignJWT(claims()).setProtectedHeader({ alg: 'RS256', kid, typ: 'at+jwt' }).sign(stranger);
    expect(await verify(foreign)).toBeUndefined();
    expect(createPublicKey(stranger).equals((await keys.verificationKey(kid))!)).toBe(false);
  });

  it('refuses an unknown kid, another algorithm, alg none and a crit header', async () => {
    expect(await verify(await joseSigned(claims(), { kid: 'unknown' }))).toBeUndefined();
    expect(await verify(await joseSigned(claims(), { alg: 'PS256' }))).toBeUndefined();
    const none = `${Buffer.from(JSON.stringify({ alg: 'none', kid, typ: 'at+jwt' })).toString('base64url')}.${Buffer.from(JSON.stringify(claims())).toString('base64url')}.`;
    expect(await verify(none)).toBeUndefined();
    expect(await verify(await handSigned({ alg: 'RS256', kid, typ: 'at+jwt' }, claims()))).toBeDefined();
    expect(await verify(await handSigned({ alg: 'RS256', kid, typ: 'at+jwt', crit: ['exp'] }, claims()))).toBeUndefined();
  });

  it('refuses what is not a compact JWS: extra segments, padding, other characters, a JSON array payload', async () => {
    const token = await signJwt(keys, 'access', claims());
    for (const bad of [`${token}.x`, `${token}=`, token.replace('.', '.+'), '', 'a.b', '...']) {
      expect(await verify(bad), bad.slice(0, 20)).toBeUndefined();
    }
    expect(await verify(await handSigned({ alg: 'RS256', kid, typ: 'at+jwt' }, ['not', 'an', 'object']))).toBeUndefined();
  });
});
