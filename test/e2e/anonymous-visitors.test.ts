/**
 * What unauthenticated authorization requests cost, read from outside: one `idp serve` on a Redis
 * of the test's own, IDP_TRUST_PROXY=true (each visitor presents its address in X-Forwarded-For)
 * and IDP_AUTHORIZE_RATE_LIMIT=250. Hundreds of cookie-less GETs of /connect/authorize from one
 * address leave no browser session and only short-lived interactions in Redis; past the budget
 * the answer is the service's own 429 page, never a redirect. A real visitor from another address
 * still signs in: the interaction lives its full time once the sign-in page is posted, the
 * session is stored only at sign-in, and the sign-in form stays bound to the browser.
 */
import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresAvailable } from '../helpers/services.ts';
import {
  AddressedBrowser, WEB_REDIRECT, codeOf, describePage, expectKind, nextAddress, pkce, readForm, signIn, startAuthorization, startStack,
  type SeedUser, type Stack,
} from './account-support.ts';
import { roomInRateWindow, startOwnRedis, type OwnRedis } from './operations-support.ts';

const LIMIT = 250;
const FLOOD = 320;
/** UNSTARTED_INTERACTION_TTL_SECONDS and INTERACTION_TTL_SECONDS of the service. */
const SHORT_TTL = 10 * 60;
const FULL_TTL = 30 * 60;
const ZOE: SeedUser = { username: 'zoe', password: 'she has a fine long password 9' };

describe.runIf(postgresAvailable)('anonymous visitors at the authorize endpoint', () => {
  let redisServer: OwnRedis;
  let redis: Redis;
  let stack: Stack;
  let base: string;

  beforeAll(async () => {
    redisServer = await startOwnRedis();
    redis = new Redis(redisServer.url, { maxRetriesPerRequest: 1 });
    stack = await startStack([ZOE], { REDIS_URL: redisServer.url, IDP_TRUST_PROXY: 'true', IDP_AUTHORIZE_RATE_LIMIT: String(LIMIT) });
    base = stack.servers[0]?.url ?? '';
  });
  afterAll(async () => {
    redis?.disconnect();
    await stack?.stop();
    await redisServer?.stop();
  });

  /** Every key of the service in Redis, by namespace, with its TTL in seconds (-1: none). */
  async function keysByNamespace(): Promise<Map<string, Array<{ key: string; ttl: number }>>> {
    const found = new Map<string, Array<{ key: string; ttl: number }>>();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', 'idp:*', 'COUNT', 1000);
      cursor = next;
      for (const key of keys) {
        const ns = key.split(':')[1] ?? '';
        const list = found.get(ns) ?? [];
        list.push({ key, ttl: await redis.ttl(key) });
        found.set(ns, list);
      }
    } while (cursor !== '0');
    return found;
  }

  /** The TTL of the interaction of a page at /interaction/{id}, found by its hash. */
  async function interactionTtl(pageUrl: string): Promise<number> {
    const id = decodeURIComponent(/\/interaction\/([^/?]+)/.exec(pageUrl)?.[1] ?? '');
    return redis.ttl(`idp:interaction:{${createHash('sha256').update(id).digest('base64url')}}`);
  }

  const authorizeUrl = () => {
    const query = new URLSearchParams({
      client_id: 'web', response_type: 'code', redirect_uri: WEB_REDIRECT, scope: 'openid', state: 'flood',
      code_challenge: pkce().challenge, code_challenge_method: 'S256',
    });
    return `${base}/connect/authorize?${query}`;
  };

  describe('a flood of cookie-less requests from one address', () => {
    const answers: Response[] = [];
    const bodies: string[] = [];
    const flooder = nextAddress();

    beforeAll(async () => {
      // The budget is per one-minute window: the whole flood falls in one.
      await roomInRateWindow(10);
      for (let sent = 0; sent < FLOOD; sent += 20) {
        const batch = await Promise.all(Array.from({ length: Math.min(20, FLOOD - sent) }, () =>
          fetch(authorizeUrl(), { redirect: 'manual', headers: { 'x-forwarded-for': flooder } })));
        for (const res of batch) {
          answers.push(res);
          bodies.push(await res.text());
        }
      }
    });

    it('is served up to IDP_AUTHORIZE_RATE_LIMIT, then refused with 429', () => {
      const statuses = answers.map((a) => a.status);
      expect(statuses.filter((s) => s === 303)).toHaveLength(LIMIT);
      expect(statuses.filter((s) => s === 429)).toHaveLength(FLOOD - LIMIT);
      // Requests are counted in order: once refused, always refused (within the window).
      expect(statuses.slice(LIMIT).every((s) => s === 429)).toBe(true);
    });

    it('over the limit gets the service\'s own error page: no redirect, no cookie, a Retry-After', () => {
      const index = answers.findIndex((a) => a.status === 429);
      const refused = answers[index] as Response;
      expect(refused.headers.get('location')).toBeNull();
      expect(refused.headers.get('content-type')).toMatch(/^text\/html/);
      expect(refused.headers.get('set-cookie')).toBeNull();
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(60);
      expect(bodies[index]).toContain('slow_down');
    });

    it('leaves no browser session and only short-lived interactions in the store', async () => {
      const keys = await keysByNamespace();
      expect(keys.get('session') ?? [], 'no session for an anonymous visitor').toHaveLength(0);
      const interactions = keys.get('interaction') ?? [];
      expect(interactions).toHaveLength(LIMIT);
      for (const { key, ttl } of interactions) {
        expect(ttl, key).toBeGreaterThan(0);
        expect(ttl, key).toBeLessThanOrEqual(SHORT_TTL);
      }
      // Nothing else the flood left outlives the short interaction either (rate counters: a minute).
      for (const [ns, list] of keys) {
        for (const { key, ttl } of list) {
          expect(ttl, `${ns}: ${key}`).not.toBe(-1);
          expect(ttl, `${ns}: ${key}`).toBeLessThanOrEqual(SHORT_TTL);
        }
      }
    });

    it('over the limit, even a request for an unknown client gets the page, not a redirect', async () => {
      const res = await fetch(authorizeUrl().replace('client_id=web', 'client_id=nobody'), { redirect: 'manual', headers: { 'x-forwarded-for': flooder } });
      expect(res.status).toBe(429);
      expect(res.headers.get('location')).toBeNull();
    });
  });

  describe('a real visitor from another address', () => {
    it('signs in: a short interaction grows to its full time when the sign-in page is posted; the session is stored only at sign-in', async () => {
      const browser = new AddressedBrowser();
      const started = await startAuthorization(browser, base);
      expectKind(started.page, 'sign-in');
      const before = await interactionTtl(started.page.url);
      expect(before).toBeGreaterThan(0);
      expect(before).toBeLessThanOrEqual(SHORT_TTL);
      expect((await keysByNamespace()).get('session') ?? []).toHaveLength(0);

      const wrong = await signIn(browser, started.page, base, ZOE.username, 'not the password at all 0');
      expectKind(wrong, 'sign-in');
      const extended = await interactionTtl(started.page.url);
      expect(extended, 'posted: the full lifetime').toBeGreaterThan(SHORT_TTL);
      expect(extended).toBeLessThanOrEqual(FULL_TTL);
      expect((await keysByNamespace()).get('session') ?? []).toHaveLength(0);

      const signedIn = await signIn(browser, wrong, base, ZOE.username, ZOE.password);
      expect(codeOf(signedIn, started.state)).not.toBe('');
      const sessions = (await keysByNamespace()).get('session') ?? [];
      expect(sessions, 'one session, for the signed-in user').toHaveLength(1);
      expect(sessions[0]?.ttl).toBeGreaterThan(FULL_TTL);
    });

    it('cannot have its sign-in form posted from another browser (the CSRF token is bound to the browser\'s cookie)', async () => {
      const victim = new AddressedBrowser();
      const started = await startAuthorization(victim, base);
      expectKind(started.page, 'sign-in');
      const form = readForm(started.page.body, started.page.url);
      // Another browser (with a cookie of its own, then with none) posts the victim's form and token.
      const attacker = new AddressedBrowser();
      await attacker.get(authorizeUrl());
      expect(attacker.cookies.size).toBe(1);
      const refused = await attacker.post(form.action, { ...form.fields, username: ZOE.username, password: ZOE.password });
      expect(refused.status, describePage(refused)).toBe(400);
      expect(refused.headers.get('location')).toBeNull();
      const cookieless = await fetch(form.action, {
        method: 'POST', redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': nextAddress() },
        body: new URLSearchParams({ ...form.fields, username: ZOE.username, password: ZOE.password }).toString(),
      });
      expect(cookieless.status).toBe(400);
      // The victim's own browser with a wrong token is refused too; with its token it goes on.
      const forged = await victim.post(form.action, { ...form.fields, csrf_token: 'x'.repeat(43), username: ZOE.username, password: ZOE.password });
      expect(forged.status, describePage(forged)).toBe(400);
      const own = await signIn(victim, started.page, base, ZOE.username, ZOE.password);
      expect(codeOf(own, started.state)).not.toBe('');
    });
  });
});
