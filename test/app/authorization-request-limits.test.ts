/**
 * The bounds of an authorization request (README, Account protection), from outside the app
 * running in this process: a parameter beyond its bound is invalid_request naming it (back to
 * the client once client and redirect URI are trusted, on the service's own page before), values
 * at their bounds are served, and the largest request an anonymous browser can make stores an
 * interaction of bounded size in Redis (read there, as an operator would).
 */
import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SEED, WEB_REDIRECT, pkce } from '../e2e/code-flow-support.ts';
import { httpFetch } from '../helpers/http-transport.ts';
import { startInProcess, type InProcessApp } from '../helpers/in-process.ts';
import { REDIS_URL, redisAvailable } from '../helpers/services.ts';

/** What an anonymous browser's request may make the service keep: well under the 6 KB it was. */
const MAX_STORED_BYTES = 2600;

interface Answer {
  status: number;
  location: string | null;
  body: string;
}

/** POSTs an authorization request (its values are too long for a comfortable URL). */
async function authorize(app: InProcessApp, params: Record<string, string>): Promise<Answer> {
  const res = await httpFetch(`${app.base}/connect/authorize`, {
    method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(params).toString(),
  });
  return { status: res.status, location: res.headers.get('location'), body: await res.text() };
}

const valid = (extra: Record<string, string> = {}) => ({
  client_id: 'web', redirect_uri: WEB_REDIRECT, response_type: 'code', scope: 'openid', code_challenge: pkce().challenge, code_challenge_method: 'S256', state: 'st-1', ...extra,
});

/** The interaction id the request was sent on to (its sign-in page). */
function interactionOf(answer: Answer): string {
  expect(answer.status, answer.body.slice(0, 300)).toBe(303);
  const id = /\/interaction\/([^/?]+)$/.exec(answer.location ?? '')?.[1];
  expect(id, `the sign-in steps: ${answer.location}`).toBeTruthy();
  return decodeURIComponent(id ?? '');
}

/** The claims parameter at its bound: every claim the service releases, then names it does not know. */
function largestClaims(max = 2048): string {
  const known = ['name', 'given_name', 'family_name', 'preferred_username', 'updated_at', 'idp', 'email', 'email_verified', 'phone_number', 'phone_number_verified', 'role'];
  const members = (names: string[]) => Object.fromEntries(names.map((n) => [n, null]));
  const json = (padding: string[]) => JSON.stringify({ id_token: members(known), userinfo: members([...known, ...padding]) });
  const padding: string[] = [];
  for (;;) {
    const more = [...padding, `x${padding.length.toString().padStart(4, '0')}`];
    if (json(more).length > max) return json(padding);
    padding.push(more[more.length - 1] ?? '');
  }
}

describe('the bounds of an authorization request', () => {
  let app: InProcessApp;

  beforeAll(async () => {
    app = await startInProcess({ seed: SEED });
  });
  afterAll(async () => {
    await app?.close();
  });

  it.each([
    ['state', 1024],
    ['nonce', 512],
    ['login_hint', 512],
    ['claims', 2048],
  ])('refuses a %s longer than %i characters with invalid_request back to the client, and serves one at the bound', async (name, max) => {
    const over = await authorize(app, valid({ [name]: 'x'.repeat(max + 1) }));
    expect(over.status, over.body.slice(0, 300)).toBe(302);
    const params = new URL(over.location ?? '').searchParams;
    expect(params.get('error')).toBe('invalid_request');
    expect(params.get('error_description')).toBe(`The ${name} parameter is too long (at most ${max} characters).`);
    // An over-long state is not echoed; any other parameter's error carries the state.
    expect(params.get('state')).toBe(name === 'state' ? null : 'st-1');
    const atBound = name === 'claims' ? largestClaims() : 'x'.repeat(max);
    expect(atBound.length).toBeLessThanOrEqual(max);
    interactionOf(await authorize(app, valid({ [name]: atBound })));
  });

  it('refuses an over-long state on its own page when the client is not trusted', async () => {
    const answer = await authorize(app, valid({ client_id: 'nobody', state: 'x'.repeat(1025) }));
    expect(answer.status).toBe(400);
    expect(answer.location).toBeNull();
  });
});

describe.runIf(redisAvailable)('what the largest anonymous authorization request stores in Redis', () => {
  let app: InProcessApp;
  let redis: Redis;
  const keys: string[] = [];

  beforeAll(async () => {
    app = await startInProcess({ seed: SEED, env: { REDIS_URL } });
    redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  });
  afterAll(async () => {
    if (keys.length > 0) await redis?.del(...keys);
    redis?.disconnect();
    await app?.close();
  });

  it(`is at most ${MAX_STORED_BYTES} bytes`, async () => {
    const id = interactionOf(await authorize(app, valid({
      scope: 'openid profile email phone roles offline_access orders.read',
      state: 's'.repeat(1024), nonce: 'n'.repeat(512), login_hint: 'l'.repeat(512), claims: largestClaims(),
      prompt: 'login consent select_account', max_age: '9999999999', response_mode: 'form_post',
      ui_locales: 'u'.repeat(2048), acr_values: 'a'.repeat(2048),
    })));
    const key = `idp:interaction:{${createHash('sha256').update(id).digest('base64url')}}`;
    keys.push(key);
    const stored = await redis.strlen(key);
    expect(stored, 'the interaction was stored').toBeGreaterThan(0);
    console.info(`largest anonymous interaction stored: ${stored} bytes`);
    expect(stored).toBeLessThanOrEqual(MAX_STORED_BYTES);
  });
});
