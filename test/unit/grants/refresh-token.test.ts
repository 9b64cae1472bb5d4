/**
 * The refresh token grant without HTTP, table-driven (in the manner of ory/fosite's
 * flow_refresh_test.go): each case builds its situation on the real stores with the injected
 * clock, makes one refresh, and states the outcome and what must hold afterwards. Lifetimes:
 * idle 1 h (sliding), absolute 4 h, reuse grace 10 s.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OAuthErrorCode } from '../../../src/errors.ts';
import type { TokenResponse } from '../../../src/grants/common.ts';
import { jwtPayload, openHarness, outcome, type Harness } from './grant-harness.ts';

const IDLE = 3600;
const ABSOLUTE = 4 * 3600;
const GRACE = 10;

type Context = Record<string, unknown> & { tokens?: TokenResponse & { refresh_token: string } };

interface RefreshCase {
  name: string;
  /** Builds the situation and returns the refresh under test. */
  setup(h: Harness, ctx: Context): Promise<() => Promise<TokenResponse>>;
  expect: 'ok' | OAuthErrorCode;
  /** What must hold afterwards (the result is undefined when the refresh failed). */
  check?(h: Harness, result: TokenResponse | undefined, ctx: Context): Promise<void>;
}

const state = (h: Harness, token: string) => h.refreshState(token);
const jti = (accessToken: string) => String(jwtPayload(accessToken).jti);
const reuseEvents = (h: Harness) => h.audit.filter((e) => e.event === 'refresh_token_reuse_detected');

/** Refreshes `count` times in a row, a second apart; returns each response. */
async function rotations(h: Harness, token: string, count: number): Promise<TokenResponse[]> {
  const responses: TokenResponse[] = [];
  let current = token;
  for (let i = 0; i < count; i++) {
    h.advance(1);
    const response = await h.refresh(current);
    responses.push(response);
    current = response.refresh_token ?? '';
  }
  return responses;
}

/** A case's setup: sign in, rotate `count` times (responses in ctx.chain), then present the first token. */
function firstTokenAfterRotations(count: number): RefreshCase['setup'] {
  return async (h, ctx) => {
    const t = await signedIn(h, ctx);
    ctx.chain = await rotations(h, t.refresh_token, count);
    return () => h.refresh(t.refresh_token);
  };
}

/** Signs in and keeps the first tokens in ctx.tokens. */
async function signedIn(h: Harness, ctx: Context, scopes?: string[]) {
  ctx.tokens = await h.signIn(scopes ? { scopes } : {});
  return ctx.tokens;
}

const cases: RefreshCase[] = [
  {
    name: 'rotates a current token: a new opaque refresh token, the old one rotated out, the shape of the code exchange',
    async setup(h, ctx) {
      const t = await signedIn(h, ctx);
      h.advance(60);
      return () => h.refresh(t.refresh_token);
    },
    expect: 'ok',
    async check(h, result, ctx) {
      const first = ctx.tokens!;
      expect(Object.keys(result!).sort()).toStrictEqual(Object.keys(first).sort());
      expect(result!.refresh_token).not.toBe(first.refresh_token);
      expect(result!.refresh_token).toMatch(/^[A-Za-z0-9_-]{71}$/);
      expect(result!.scope).toBe(first.scope);
      expect((await state(h, first.refresh_token))?.current).toBe(false);
      const next = await state(h, result!.refresh_token ?? '');
      expect(next?.current).toBe(true);
      expect(next?.family.rotatedAt?.getTime()).toBe(h.now());
      // Sliding idle expiry: one idle period from this refresh.
      expect(next?.family.tokenExpiresAt.getTime()).toBe(h.now() + IDLE * 1000);
      expect(jti(result!.access_token)).not.toBe(jti(first.access_token));
      expect(jwtPayload(result!.id_token ?? '')).not.toHaveProperty('nonce');
    },
  },
  {
    name: 'refuses an unknown token',
    async setup(h) {
      return () => h.refresh('x'.repeat(43));
    },
    expect: 'invalid_grant',
  },
  {
    name: 'refuses another client\'s token without rotating it; the rightful client can still use it',
    async setup(h, ctx) {
      const t = await signedIn(h, ctx);
      ctx.before = reuseEvents(h).length;
      return () => h.refresh(t.refresh_token, 'other');
    },
    expect: 'invalid_grant',
    async check(h, _result, ctx) {
      const t = ctx.tokens!;
      expect((await state(h, t.refresh_token))?.current).toBe(true);
      expect(reuseEvents(h).length).toBe(ctx.before);
      expect(await outcome(h.refresh(t.refresh_token, 'web'))).toBe('ok');
    },
  },
  {
    name: 'accepts a token one second before its idle expiry',
    async setup(h, ctx) {
      const t = await signedIn(h, ctx);
      h.advance(IDLE - 1);
      return () => h.refresh(t.refresh_token);
    },
    expect: 'ok',
  },
  {
    name: 'refuses a token one second after its idle expiry, without calling it theft',
    async setup(h, ctx) {
      const t = await signedIn(h, ctx);
      ctx.before = reuseEvents(h).length;
      h.advance(IDLE + 1);
      return () => h.refresh(t.refresh_token);
    },
    expect: 'invalid_grant',
    async check(h, _result, ctx) {
      expect(reuseEvents(h).length).toBe(ctx.before);
      expect((await state(h, ctx.tokens!.refresh_token))?.family.revokedAt).toBeNull();
    },
  },
  {
    name: 'slides the idle expiry: each refresh grants another idle period',
    async setup(h, ctx) {
      const t = await signedIn(h, ctx);
      h.advance(IDLE - 1);
      const second = await h.refresh(t.refresh_token);
      h.advance(IDLE - 1);
      // 2 × idle − 2 s after the sign-in: past the first token's idle expiry, within the second's.
      return () => h.refresh(second.refresh_token ?? '');
    },
    expect: 'ok',
  },
  {
    name: 'keeps a family refreshed every half idle period alive until one second before the absolute limit',
    async setup(h, ctx) {
      let current = (await signedIn(h, ctx)).refresh_token;
      ctx.start = h.now();
      // Refreshes at 0.5 h, 1 h, ... 3.5 h.
      for (let elapsed = IDLE / 2; elapsed < ABSOLUTE; elapsed += IDLE / 2) {
        h.advance(IDLE / 2);
        const next = await h.refresh(current);
        current = next.refresh_token ?? '';
      }
      h.advance(IDLE / 2 - 1);
      return () => h.refresh(current);
    },
    expect: 'ok',
    async check(h, result, ctx) {
      // The successor's idle expiry is capped at the family's absolute end.
      const next = await state(h, result!.refresh_token ?? '');
      expect(next?.family.expiresAt.getTime()).toBe(Number(ctx.start) + ABSOLUTE * 1000);
      expect(next?.family.tokenExpiresAt.getTime()).toBe(Number(ctx.start) + ABSOLUTE * 1000);
    },
  },
  {
    name: 'ends a family refreshed every half idle period at the absolute limit: rotation never extends it',
    async setup(h, ctx) {
      let current = (await signedIn(h, ctx)).refresh_token;
      for (let elapsed = IDLE / 2; elapsed < ABSOLUTE; elapsed += IDLE / 2) {
        h.advance(IDLE / 2);
        current = (await h.refresh(current)).refresh_token ?? '';
      }
      // 3.5 h refreshed; now one second past 4 h.
      h.advance(IDLE / 2 + 1);
      return () => h.refresh(current);
    },
    expect: 'invalid_grant',
  },
  {
    name: 'gives the rotated-out token the identical successor response one second before the grace window ends',
    async setup(h, ctx) {
      const t = await signedIn(h, ctx);
      ctx.successor = await h.refresh(t.refresh_token);
      h.advance(GRACE - 1);
      return () => h.refresh(t.refresh_token);
    },
    expect: 'ok',
    async check(h, result, ctx) {
      const successor = ctx.successor as TokenResponse;
      expect(JSON.stringify(result)).toBe(JSON.stringify(successor));
      // No new rotation: the successor is still the current token, the family is alive.
      const current = await state(h, successor.refresh_token ?? '');
      expect(current?.current).toBe(true);
      expect(current?.family.revokedAt).toBeNull();
      expect(await h.isRevoked(successor.access_token)).toBe(false);
      expect(await outcome(h.refresh(successor.refresh_token ?? ''))).toBe('ok');
    },
  },
  {
    name: 'gives a token rotated out five generations back, still within the window, its own successor response again',
    setup: firstTokenAfterRotations(5),
    expect: 'ok',
    async check(h, result, ctx) {
      const chain = ctx.chain as TokenResponse[];
      expect(JSON.stringify(result)).toBe(JSON.stringify(chain[0]));
      const latest = await state(h, chain[4]?.refresh_token ?? '');
      expect(latest?.current).toBe(true);
      expect(latest?.family.revokedAt).toBeNull();
    },
  },
  {
    name: 'treats a token rotated out six generations back as reuse, even within the window',
    setup: firstTokenAfterRotations(6),
    expect: 'invalid_grant',
    async check(h, _result, ctx) {
      const chain = ctx.chain as TokenResponse[];
      expect((await state(h, chain[5]?.refresh_token ?? ''))?.family.revokedAt).not.toBeNull();
    },
  },
  {
    name: 'treats the rotated-out token one second after the grace window as theft: family and its access tokens revoked, audit event',
    async setup(h, ctx) {
      const t = await signedIn(h, ctx);
      h.advance(30);
      ctx.rotatedAt = h.now();
      ctx.successor = await h.refresh(t.refresh_token);
      h.advance(GRACE + 1);
      ctx.reusedAt = h.now();
      ctx.before = reuseEvents(h).length;
      return () => h.refresh(t.refresh_token);
    },
    expect: 'invalid_grant',
    async check(h, _result, ctx) {
      const first = ctx.tokens!;
      const successor = ctx.successor as TokenResponse;
      const current = await state(h, successor.refresh_token ?? '');
      expect(current?.family.revokedAt?.getTime()).toBe(ctx.reusedAt);
      // The newest token is refused, and every access token of the family is revoked.
      expect(await outcome(h.refresh(successor.refresh_token ?? ''))).toBe('invalid_grant');
      expect(await h.isRevoked(successor.access_token)).toBe(true);
      expect(await h.isRevoked(first.access_token)).toBe(true);
      const events = reuseEvents(h).slice(Number(ctx.before));
      expect(events).toHaveLength(1);
      expect(events[0]?.fields).toMatchObject({
        client_id: 'web',
        family_id: current?.family.id,
        rotated_at: new Date(Number(ctx.rotatedAt)).toISOString(),
        reused_at: new Date(Number(ctx.reusedAt)).toISOString(),
      });
    },
  },
  {
    name: 'refuses a reused token again after the family is revoked, without a second audit event',
    async setup(h, ctx) {
      const t = await signedIn(h, ctx);
      await h.refresh(t.refresh_token);
      h.advance(GRACE + 1);
      await outcome(h.refresh(t.refresh_token));
      ctx.before = reuseEvents(h).length;
      return () => h.refresh(t.refresh_token);
    },
    expect: 'invalid_grant',
    async check(h, _result, ctx) {
      expect(reuseEvents(h).length).toBe(ctx.before);
    },
  },
  {
    name: 'narrows the scope when asked for a subset',
    async setup(h, ctx) {
      const t = await signedIn(h, ctx, ['openid', 'profile', 'email', 'offline_access']);
      return () => h.refresh(t.refresh_token, 'web', 'openid offline_access');
    },
    expect: 'ok',
    async check(_h, result) {
      expect(result!.scope).toBe('openid offline_access');
      expect(jwtPayload(result!.access_token).scope).toBe('openid offline_access');
      const id = jwtPayload(result!.id_token ?? '');
      expect(id).not.toHaveProperty('name');
      expect(id).not.toHaveProperty('email');
    },
  },
  {
    name: 'refuses to widen the scope (invalid_scope) and leaves the token current',
    async setup(h, ctx) {
      const t = await signedIn(h, ctx, ['openid', 'offline_access']);
      return () => h.refresh(t.refresh_token, 'web', 'openid offline_access email');
    },
    expect: 'invalid_scope',
    async check(h, _result, ctx) {
      expect((await state(h, ctx.tokens!.refresh_token))?.current).toBe(true);
      expect(await outcome(h.refresh(ctx.tokens!.refresh_token))).toBe('ok');
    },
  },
  {
    name: 'refuses a scope the client may not even use (invalid_scope)',
    async setup(h, ctx) {
      const t = await signedIn(h, ctx, ['openid', 'offline_access']);
      return () => h.refresh(t.refresh_token, 'web', 'admin_api');
    },
    expect: 'invalid_scope',
  },
  {
    name: 'refuses a token of a revoked family',
    async setup(h, ctx) {
      const t = await signedIn(h, ctx);
      const found = await state(h, t.refresh_token);
      await h.durable.refreshTokens.revokeFamily(found?.family.id ?? '', 'test', new Date(h.now()));
      return () => h.refresh(t.refresh_token);
    },
    expect: 'invalid_grant',
  },
  {
    name: 'answers two concurrent refreshes with one token identically',
    async setup(h, ctx) {
      const t = await signedIn(h, ctx);
      return async () => {
        const [one, two] = await Promise.all([h.refresh(t.refresh_token), h.refresh(t.refresh_token)]);
        expect(JSON.stringify(two)).toBe(JSON.stringify(one));
        return one;
      };
    },
    expect: 'ok',
  },
];

/** RFC 6749 §5.2: a token request fails with invalid_grant for these users (README, Endpoints). */
const userCases: Array<{ name: string; act(h: Harness, userId: string): Promise<unknown> }> = [
  { name: 'removed', act: (h, id) => h.durable.users.remove(id) },
  { name: 'locked', act: (h, id) => h.durable.users.update(id, { locked: true }) },
  { name: 'made to change password', act: (h, id) => h.durable.users.update(id, { mustChangePassword: true }) },
  { name: 'made to enrol in MFA', act: (h, id) => h.durable.users.update(id, { mustEnrolMfa: true }) },
];

describe('refresh token grant', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await openHarness({ refreshLifetime: { idleSeconds: IDLE, absoluteSeconds: ABSOLUTE }, graceSeconds: GRACE });
  });
  afterAll(async () => {
    await h?.close();
  });

  for (const c of cases) {
    it(c.name, async () => {
      const ctx: Context = {};
      const call = await c.setup(h, ctx);
      let result: TokenResponse | undefined;
      const got = await outcome(call().then((r) => (result = r)));
      expect(got).toBe(c.expect);
      await c.check?.(h, result, ctx);
    });
  }

  for (const u of userCases) {
    it(`refuses a refresh with invalid_grant once the user is ${u.name}`, async () => {
      const user = await h.addUser(`user-${u.name.replace(/\W+/g, '-').toLowerCase()}`);
      const t = await h.signIn({ userId: user.id });
      // Good until the change.
      const second = await h.refresh(t.refresh_token);
      await u.act(h, user.id);
      expect(await outcome(h.refresh(second.refresh_token ?? ''))).toBe('invalid_grant');
    });
  }
});
