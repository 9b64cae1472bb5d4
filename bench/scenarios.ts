/**
 * The scenarios as autocannon requests, with what counts as a good answer. Single-use values
 * (codes, refresh tokens) are handed out from closures, not from autocannon's per-connection
 * context (which autocannon resets after every sequence).
 */
import type { Options, Request } from 'autocannon';
import { readForm } from '../test/helpers/browser-http.ts';
import { basic, PKCE_VERIFIER, SERVICE, WEB } from './prepare.ts';

export type ScenarioName =
  | 'discovery' | 'jwks' | 'client-credentials' | 'code-exchange' | 'refresh'
  | 'introspection' | 'introspection-refresh' | 'userinfo' | 'password-sign-in';

export interface ScenarioData {
  codes?: string[];
  refreshTokens?: string[];
  accessToken?: string;
  /** A current refresh token that the run never rotates (introspection-refresh). */
  refreshToken?: string;
  authorizePath?: string;
  user?: { username: string; password: string };
}

/** What one phase saw, besides autocannon's own counters. */
export interface Tally {
  /** Latencies in ms of good answers (of whole sign-ins for password-sign-in). */
  latencies: number[];
  /** Good answers (completed sign-ins for password-sign-in). */
  good: number;
  /** Answers with an unexpected status (a redirect is expected at some sign-in steps). */
  unexpected: number;
  /** Expected status, wrong body (no token, inactive, no code). */
  bad: number;
}

export interface Scenario {
  options: Omit<Options, 'url' | 'connections' | 'duration' | 'amount'>;
  /** Whether autocannon's per-response event records latency (false: the scenario does it). */
  perResponse: boolean;
  tally: Tally;
}

const FORM = 'application/x-www-form-urlencoded';

export function newTally(): Tally {
  return { latencies: [], good: 0, unexpected: 0, bad: 0 };
}

function expectJson(tally: Tally, check: (body: string) => boolean): Request['onResponse'] {
  return (status, body) => {
    if (status === 200 && !check(body)) tally.bad += 1;
  };
}

/** Hands out values in order; when they run out, a value the server rejects (counted as an error). */
function dispenser(values: string[]): () => string {
  let next = 0;
  return () => values[next++] ?? 'exhausted';
}

export function buildScenario(name: ScenarioName, data: ScenarioData, tally: Tally): Scenario {
  const api = (options: Scenario['options']): Scenario => ({ options, perResponse: true, tally });
  switch (name) {
    case 'discovery':
      return api({ method: 'GET', requests: [{ path: '/.well-known/openid-configuration' }] });
    case 'jwks':
      return api({ method: 'GET', requests: [{ path: '/.well-known/jwks' }] });
    case 'client-credentials':
      return api({
        requests: [{
          method: 'POST', path: '/connect/token',
          headers: { 'content-type': FORM, authorization: basic(SERVICE.clientId, SERVICE.secret) },
          body: `grant_type=client_credentials&scope=${SERVICE.scope}`,
          onResponse: expectJson(tally, (b) => b.includes('"access_token"')),
        }],
      });
    case 'code-exchange': {
      const nextCode = dispenser(data.codes ?? []);
      const tail = `&redirect_uri=${encodeURIComponent(WEB.redirectUri)}&code_verifier=${PKCE_VERIFIER}`;
      return api({
        requests: [{
          method: 'POST', path: '/connect/token',
          headers: { 'content-type': FORM, authorization: basic(WEB.clientId, WEB.secret) },
          setupRequest: (req) => ({ ...req, body: `grant_type=authorization_code&code=${nextCode()}${tail}` }),
          onResponse: expectJson(tally, (b) => b.includes('"id_token"') && b.includes('"refresh_token"')),
        }],
      });
    }
    case 'refresh':
      return api(refreshChain(data.refreshTokens ?? [], tally));
    case 'introspection':
    case 'introspection-refresh': {
      const token = name === 'introspection' ? data.accessToken : data.refreshToken;
      const hint = name === 'introspection' ? 'access_token' : 'refresh_token';
      return api({
        requests: [{
          method: 'POST', path: '/connect/introspect',
          headers: { 'content-type': FORM, authorization: basic(WEB.clientId, WEB.secret) },
          body: `token=${token ?? ''}&token_type_hint=${hint}`,
          onResponse: expectJson(tally, (b) => b.startsWith('{"active":true')),
        }],
      });
    }
    case 'userinfo':
      return api({
        requests: [{
          method: 'GET', path: '/connect/userinfo', headers: { authorization: `Bearer ${data.accessToken ?? ''}` },
          onResponse: expectJson(tally, (b) => b.includes('"sub"')),
        }],
      });
    case 'password-sign-in':
      return { options: signInSequence(data, tally), perResponse: false, tally };
  }
}

/**
 * Refresh tokens are single-use: each answer's refresh token goes back into the pool for the
 * next request, so a few families per connection last a whole run (each request rotates one).
 */
function refreshChain(initial: string[], tally: Tally): Scenario['options'] {
  const pool = [...initial];
  return {
    requests: [{
      method: 'POST', path: '/connect/token',
      headers: { 'content-type': FORM, authorization: basic(WEB.clientId, WEB.secret) },
      setupRequest: (req) => ({ ...req, body: `grant_type=refresh_token&refresh_token=${pool.shift() ?? 'exhausted'}` }),
      onResponse: (status, body) => {
        if (status !== 200) return;
        const next = /"refresh_token":"([^"]+)"/.exec(body)?.[1];
        if (next) pool.push(next);
        else tally.bad += 1;
      },
    }],
  };
}

function header(headers: Record<string, string | string[]>, name: string): string | undefined {
  const value = Object.entries(headers).find(([k]) => k.toLowerCase() === name)?.[1];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * A whole password sign-in per sequence, as a browser without JavaScript does it, from a fresh
 * browser each time: authorize (303 to the sign-in page, a new session cookie), the sign-in
 * page (200, its CSRF token), POST the password (302 to the client with a code).
 */
function signInSequence(data: ScenarioData, tally: Tally): Scenario['options'] {
  const user = data.user ?? { username: '', password: '' };
  const steps: Request[] = [
    {
      method: 'GET', path: data.authorizePath ?? '/',
      setupRequest: (req, ctx) => ((ctx.started = performance.now()), req),
      onResponse: (status, _body, ctx, headers) => {
        const location = header(headers, 'location');
        const cookie = header(headers, 'set-cookie')?.split(';')[0];
        if (status !== 303 || !location || !cookie) return void (tally.unexpected += 1);
        ctx.page = new URL(location, 'http://bench').pathname;
        ctx.cookie = cookie;
      },
    },
    {
      method: 'GET',
      setupRequest: (req, ctx) => (typeof ctx.page === 'string' ? { ...req, path: ctx.page, headers: { cookie: String(ctx.cookie) } } : undefined),
      onResponse: (status, body, ctx) => {
        if (status !== 200) return void (tally.unexpected += 1);
        try {
          const form = readForm(body, 'http://bench/');
          ctx.action = new URL(form.action).pathname;
          ctx.form = new URLSearchParams({ ...form.fields, username: user.username, password: user.password }).toString();
        } catch {
          tally.bad += 1;
        }
      },
    },
    {
      method: 'POST',
      setupRequest: (req, ctx) => (typeof ctx.action === 'string'
        ? { ...req, path: ctx.action, headers: { cookie: String(ctx.cookie), 'content-type': FORM }, body: String(ctx.form) }
        : undefined),
      onResponse: (status, _body, ctx, headers) => {
        if (status !== 302) return void (tally.unexpected += 1);
        if (!header(headers, 'location')?.includes('code=')) return void (tally.bad += 1);
        tally.good += 1;
        tally.latencies.push(performance.now() - Number(ctx.started));
      },
    },
  ];
  return { requests: steps };
}
