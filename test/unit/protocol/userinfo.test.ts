/**
 * Userinfo (OIDC Core §5.3) without HTTP, table-driven on the real stores: which Bearer tokens
 * get claims, and the order of the checks (a cross-origin call is judged once the token is
 * known good, before the user is).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClientRecord } from '../../../src/store/records.ts';
import { userinfo, type UserinfoDeps } from '../../../src/protocol/userinfo.ts';
import { jwtPayload, openHarness, outcome, type Harness } from '../grants/grant-harness.ts';

interface UserinfoCase {
  name: string;
  /** The Authorization header to send. */
  authorization(h: Harness): Promise<string | undefined>;
  expect: string;
}

const bearer = (token: string) => `Bearer ${token}`;

const cases: UserinfoCase[] = [
  { name: 'no Authorization header', authorization: async () => undefined, expect: 'invalid_token' },
  { name: 'a Basic header', authorization: async () => 'Basic d2ViOnNlY3JldA==', expect: 'invalid_token' },
  { name: 'a token not issued here', authorization: async () => bearer('a.b.c'), expect: 'invalid_token' },
  {
    name: 'a client credentials token (no user)',
    authorization: async (h) => bearer((await h.grants.clientCredentials.handle({}, h.client('service'), h.log)).access_token),
    expect: 'invalid_token',
  },
  {
    name: 'an expired token',
    async authorization(h) {
      const t = await h.signIn();
      h.advance(601);
      return bearer(t.access_token);
    },
    expect: 'invalid_token',
  },
  {
    name: 'a revoked token',
    async authorization(h) {
      const t = await h.signIn();
      await h.deps.revocations.revoke([{ jti: String(jwtPayload(t.access_token).jti), exp: Math.floor(h.now() / 1000) + 600 }]);
      return bearer(t.access_token);
    },
    expect: 'invalid_token',
  },
  {
    name: 'a token of a locked user',
    async authorization(h) {
      const carol = await h.addUser(`carol${Math.random().toString(36).slice(2, 8)}`);
      const t = await h.signIn({ userId: carol.id });
      await h.durable.users.upsert({ ...carol, locked: true });
      return bearer(t.access_token);
    },
    expect: 'invalid_token',
  },
  { name: 'a token of a disabled client', authorization: async (h) => bearer((await h.signIn({ clientId: 'disabled' })).access_token), expect: 'invalid_token' },
  {
    name: 'a token of a client removed since',
    async authorization(h) {
      const t = await h.signIn({ clientId: 'other' });
      await h.durable.clients.remove('other');
      return bearer(t.access_token);
    },
    expect: 'invalid_token',
  },
  { name: 'a token without openid', authorization: async (h) => bearer((await h.signIn({ scopes: ['offline_access', 'orders.read'] })).access_token), expect: 'insufficient_scope' },
  { name: 'a good token', authorization: async (h) => bearer((await h.signIn()).access_token), expect: 'ok' },
];

describe('userinfo', () => {
  let h: Harness;
  let deps: UserinfoDeps;
  beforeAll(async () => {
    h = await openHarness();
    deps = h.deps;
  });
  afterAll(async () => {
    await h?.close();
  });

  for (const c of cases) {
    it(`${c.name} -> ${c.expect}`, async () => {
      expect(await outcome(userinfo({ authorization: await c.authorization(h) }, deps))).toBe(c.expect);
    });
  }

  it('answers the subject and the claims of the token\'s scopes only', async () => {
    const t = await h.signIn({ scopes: ['openid', 'profile', 'offline_access'] });
    const claims = await userinfo({ authorization: bearer(t.access_token) }, deps);
    expect(claims).toMatchObject({ sub: h.user.subject, name: 'Alice Liddell', given_name: 'Alice' });
    expect(claims.email).toBeUndefined();
  });

  it('asks the route about a cross-origin call with the token\'s client, and stops when it refuses', async () => {
    const t = await h.signIn();
    const asked: ClientRecord[] = [];
    await userinfo({ authorization: bearer(t.access_token), checkClient: (client) => void asked.push(client) }, deps);
    expect(asked.map((c) => c.clientId)).toStrictEqual(['web']);
    const refused = userinfo({ authorization: bearer(t.access_token), checkClient: () => { throw new Error('origin refused'); } }, deps);
    await expect(refused).rejects.toThrow('origin refused');
  });
});
