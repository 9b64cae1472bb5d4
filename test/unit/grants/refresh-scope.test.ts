/**
 * RFC 6749 §6: a refresh may narrow the granted scope, never widen it. The check needs the
 * family (it says what was granted) and nothing more: each case runs the grant over deps where
 * everything but reading the family throws, so a case that reaches a user lookup, a directory,
 * a signature, a rotation or a revocation fails loudly. Cases the scope does not decide keep
 * their earlier answer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OAuthErrorCode } from '../../../src/errors.ts';
import { createRefreshTokenGrant } from '../../../src/grants/refresh-token.ts';
import { openHarness, outcome, type Harness, type HarnessDeps } from './grant-harness.ts';

/** An object whose every method throws: a call to it is I/O the case must not reach. */
function forbidden<T extends object>(name: string, calls: string[]): T {
  return new Proxy({} as T, {
    get: (_target, prop) => () => {
      calls.push(`${name}.${String(prop)}`);
      throw new Error(`${name}.${String(prop)} called: no I/O expected before the scope check`);
    },
  });
}

/** The harness's deps with only the family lookup left working. */
function readOnlyFamilies(deps: HarnessDeps, calls: string[]): HarnessDeps {
  const refreshTokens = forbidden<HarnessDeps['refreshTokens']>('refreshTokens', calls);
  return {
    ...deps,
    keys: forbidden('keys', calls),
    users: forbidden('users', calls),
    revocations: forbidden('revocations', calls),
    accessTokens: forbidden('accessTokens', calls),
    codes: forbidden('codes', calls),
    currentUser: () => forbidden<{ call(): never }>('currentUser', calls).call(),
    refreshTokens: Object.assign(Object.create(refreshTokens) as HarnessDeps['refreshTokens'], {
      get: (id: string) => deps.refreshTokens.get(id),
      findLegacy: (hash: string) => deps.refreshTokens.findLegacy(hash),
    }),
  };
}

interface ScopeCase {
  name: string;
  /** Returns the refresh token to present, after moving the clock as the case needs. */
  setup(h: Harness): Promise<string>;
  scope: string;
  expect: OAuthErrorCode;
}

const cases: ScopeCase[] = [
  {
    name: 'a current token asking for a scope never granted',
    setup: async (h) => (await h.signIn()).refresh_token,
    scope: 'openid email',
    expect: 'invalid_scope',
  },
  {
    name: 'a current token asking for an API scope the client has but the user never granted',
    setup: async (h) => (await h.signIn()).refresh_token,
    scope: 'orders.write',
    expect: 'invalid_scope',
  },
  {
    name: 'a token rotated out within the grace window, asking for more',
    async setup(h) {
      const first = await h.signIn();
      await h.refresh(first.refresh_token);
      h.advance(1);
      return first.refresh_token;
    },
    scope: 'openid profile offline_access email',
    expect: 'invalid_scope',
  },
  {
    // Expiry is decided first, as before: an expired token is invalid_grant whatever it asks.
    name: 'an expired token asking for more',
    async setup(h) {
      const first = await h.signIn();
      h.advance(3601);
      return first.refresh_token;
    },
    scope: 'openid email',
    expect: 'invalid_grant',
  },
];

describe('refresh token grant: a widened scope is refused before any I/O but reading the family', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await openHarness();
  });
  afterAll(async () => {
    await h?.close();
  });

  for (const c of cases) {
    it(`${c.name} -> ${c.expect}`, async () => {
      const token = await c.setup(h);
      const calls: string[] = [];
      const grant = createRefreshTokenGrant(readOnlyFamilies(h.deps, calls));
      expect(await outcome(grant.handle({ refresh_token: token, scope: c.scope }, h.client('web'), h.log))).toBe(c.expect);
      expect(calls).toStrictEqual([]);
    });
  }

  it('still revokes the family of a token reused past the grace window, whatever scope it asks for', async () => {
    const first = await h.signIn();
    await h.refresh(first.refresh_token);
    h.advance(60);
    expect(await outcome(h.refresh(first.refresh_token, 'web', 'openid email'))).toBe('invalid_grant');
    expect((await h.refreshState(first.refresh_token))?.family.revokedAt).not.toBeNull();
  });

  it('grants a narrower scope with the real deps', async () => {
    const first = await h.signIn();
    const narrowed = await h.refresh(first.refresh_token, 'web', 'openid offline_access');
    expect(narrowed.scope).toBe('openid offline_access');
  });
});
