import { describe, expect, it } from 'vitest';
import { OAuthError } from '../../../src/errors.ts';
import { authenticateClient, type ClientCredentialsInput } from '../../../src/protocol/client-auth.ts';
import type { ClientRecord } from '../../../src/store/records.ts';
import { hashClientSecret } from '../../../src/tokens/opaque.ts';
import { basic } from '../../helpers/oauth.ts';

const NOW = Date.parse('2026-11-22T12:00:00Z');
const SECRET = 'a secret: with+plus %percent & more-0123456789';

function client(overrides: Partial<ClientRecord>): ClientRecord {
  return {
    clientId: 'web', displayName: 'Web', enabled: true, secretHash: hashClientSecret(SECRET), secretExpiresAt: null,
    grantTypes: ['authorization_code'], scopes: ['openid'], redirectUris: [], postLogoutRedirectUris: [], corsOrigins: [],
    accessTokenLifetime: 3600, requireConsent: false, ...overrides,
  };
}

const clients = new Map<string, ClientRecord>([
  ['web', client({})],
  ['id:with%colon', client({ clientId: 'id:with%colon' })],
  ['spa', client({ clientId: 'spa', secretHash: null })],
  ['off', client({ clientId: 'off', enabled: false })],
  ['old', client({ clientId: 'old', secretExpiresAt: new Date(NOW - 1000) })],
  ['later', client({ clientId: 'later', secretExpiresAt: new Date(NOW + 1000) })],
]);
const deps = { findClient: async (id: string) => clients.get(id), now: NOW };


const input = (partial: Partial<ClientCredentialsInput>): ClientCredentialsInput => ({ authorization: undefined, clientId: undefined, clientSecret: undefined, ...partial });

async function failure(partial: Partial<ClientCredentialsInput>): Promise<string> {
  try {
    await authenticateClient(input(partial), deps);
  } catch (error) {
    if (error instanceof OAuthError) return error.code;
    throw error;
  }
  return 'accepted';
}

describe('authenticateClient', () => {
  it('accepts client_secret_basic with the form-decoding of RFC 6749 §2.3.1', async () => {
    const result = await authenticateClient(input({ authorization: basic('id:with%colon', SECRET) }), deps);
    expect(result).toMatchObject({ method: 'client_secret_basic', client: { clientId: 'id:with%colon' } });
  });

  it('accepts client_secret_post and a public client by client_id', async () => {
    expect((await authenticateClient(input({ clientId: 'web', clientSecret: SECRET }), deps)).method).toBe('client_secret_post');
    expect((await authenticateClient(input({ clientId: 'spa' }), deps)).method).toBe('none');
  });

  it('accepts a Basic secret sent raw, without the form-encoding, as several client libraries do', async () => {
    const raw = `Basic ${Buffer.from(`web:${SECRET}`).toString('base64')}`;
    expect((await authenticateClient(input({ authorization: raw }), deps)).method).toBe('client_secret_basic');
  });

  it('never asks for a client id the clients table cannot hold', async () => {
    const asked: string[] = [];
    const spying = { ...deps, findClient: async (id: string) => (asked.push(id), clients.get(id)) };
    for (const header of ['Basic ADoA', `Basic ${Buffer.from('a%00b:x').toString('base64')}`, `Basic ${Buffer.from(`${'x'.repeat(201)}:y`).toString('base64')}`]) {
      await expect(authenticateClient(input({ authorization: header }), spying)).rejects.toThrow(OAuthError);
    }
    expect(asked).toStrictEqual([]);
  });

  it('accepts a secret that expires later', async () => {
    expect((await authenticateClient(input({ authorization: basic('later', SECRET) }), deps)).client.clientId).toBe('later');
  });

  it.each([
    ['a wrong secret', { authorization: basic('web', `${SECRET}x`) }, 'invalid_client'],
    ['a NUL for a client id in Basic', { authorization: 'Basic ADoA' }, 'invalid_client'],
    ['a form-encoded NUL in the Basic client id', { authorization: `Basic ${Buffer.from('a%00b:x').toString('base64')}` }, 'invalid_client'],
    ['an unknown client', { authorization: basic('nobody', SECRET) }, 'invalid_client'],
    ['a disabled client', { authorization: basic('off', SECRET) }, 'invalid_client'],
    ['an expired secret', { authorization: basic('old', SECRET) }, 'invalid_client'],
    ['a confidential client without its secret', { clientId: 'web' }, 'invalid_client'],
    ['a public client sending a secret', { clientId: 'spa', clientSecret: 'anything-at-all' }, 'invalid_client'],
    ['no authentication at all', {}, 'invalid_client'],
    ['a malformed Basic header', { authorization: 'Basic !!!' }, 'invalid_client'],
    ['Basic without a colon', { authorization: `Basic ${Buffer.from('web').toString('base64')}` }, 'invalid_client'],
    ['two methods at once', { authorization: basic('web', SECRET), clientSecret: SECRET }, 'invalid_request'],
    ['a client_id that disagrees with Basic', { authorization: basic('web', SECRET), clientId: 'spa' }, 'invalid_request'],
  ])('refuses %s', async (_name, partial, code) => {
    expect(await failure(partial)).toBe(code);
  });
});

describe('authenticateClient with the previous secret of a rotation', () => {
  const OLD = 'the secret before the rotation-0123456789abcdef';
  const reasons: string[] = [];
  const rotating = (expiresAt: number, secretExpiresAt: Date | null = null) =>
    client({ clientId: 'rot', secretExpiresAt, previousSecret: { hash: hashClientSecret(OLD), expiresAt: new Date(expiresAt) } });
  const attempt = async (record: ClientRecord, secret: string) => {
    try {
      await authenticateClient(input({ authorization: basic('rot', secret) }), { findClient: async () => record, now: NOW, failed: (reason) => void reasons.push(reason) });
      return 'accepted';
    } catch (error) {
      if (error instanceof OAuthError) return `${error.code}/${reasons.at(-1)}`;
      throw error;
    }
  };

  it.each([
    ['the new secret, while the old one is kept', rotating(NOW + 1000), SECRET, 'accepted'],
    ['the old secret before its expiry', rotating(NOW + 1000), OLD, 'accepted'],
    ['the old secret at its expiry', rotating(NOW), OLD, 'invalid_client/expired_secret'],
    ['the old secret after its expiry', rotating(NOW - 1000), OLD, 'invalid_client/expired_secret'],
    ['a wrong secret during the window', rotating(NOW + 1000), `${OLD}x`, 'invalid_client/bad_secret'],
    ['the new secret past its own expiry, even while the old one is kept', rotating(NOW + 1000, new Date(NOW - 1)), SECRET, 'invalid_client/expired_secret'],
    ['the old secret when none is kept', client({ clientId: 'rot' }), OLD, 'invalid_client/bad_secret'],
  ])('%s', async (_name, record, secret, expected) => {
    expect(await attempt(record, secret)).toBe(expected);
  });
});
