/**
 * A relying party and its user, from outside: the authorization request with PKCE, the sign-in
 * and consent pages walked in a cookie-jar browser, the code exchanged, tokens refreshed,
 * introspected and revoked, userinfo asked, ID and access tokens read. Every e2e kit and the
 * in-process tests share these; all HTTP goes through httpFetch, so the same calls reach a
 * spawned `idp serve` or the app in this process (test/helpers/in-process.ts).
 */
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { Browser, readForm, type Page } from './browser-http.ts';
import { httpFetch } from './http-transport.ts';
import { basic, jsonBody, pkce } from './oauth.ts';

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export interface User {
  username: string;
  password: string;
}

// ---------------------------------------------------------------------------------------------
// Requests and their answers

export interface HttpResponse {
  status: number;
  headers: Headers;
  /** The body exactly as received. */
  text: string;
  /** The body parsed as JSON, or `{ unparsed: text }`. */
  body: Record<string, unknown>;
}

/** One request, redirects not followed; the body read whole. */
export async function request(url: string, init: RequestInit = {}): Promise<HttpResponse> {
  const res = await httpFetch(url, { redirect: 'manual', ...init });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: jsonBody(text) };
}

/** POSTs a form (fields, or a body already encoded) as application/x-www-form-urlencoded unless `headers` say otherwise. */
export function postForm(url: string, form: Record<string, string> | string, headers: Record<string, string> = {}): Promise<HttpResponse> {
  return request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: typeof form === 'string' ? form : new URLSearchParams(form).toString(),
  });
}

export interface ClientCredentials {
  clientId: string;
  /** Absent for public clients. */
  secret?: string;
}

/** A POST to `path` as `who`: Basic for confidential clients, client_id in the body for public ones. */
export function clientPost(base: string, path: string, who: ClientCredentials, form: Record<string, string>, headers: Record<string, string> = {}): Promise<HttpResponse> {
  if (who.secret === undefined) return postForm(`${base}${path}`, { client_id: who.clientId, ...form }, headers);
  return postForm(`${base}${path}`, form, { authorization: basic(who.clientId, who.secret), ...headers });
}

export const token = (base: string, who: ClientCredentials, form: Record<string, string>, headers: Record<string, string> = {}) =>
  clientPost(base, '/connect/token', who, form, headers);
export const refresh = (base: string, who: ClientCredentials, refreshToken: string, extra: Record<string, string> = {}, headers: Record<string, string> = {}) =>
  token(base, who, { grant_type: 'refresh_token', refresh_token: refreshToken, ...extra }, headers);
export const introspect = (base: string, who: ClientCredentials, tokenValue: string, extra: Record<string, string> = {}, headers: Record<string, string> = {}) =>
  clientPost(base, '/connect/introspect', who, { token: tokenValue, ...extra }, headers);
export const revoke = (base: string, who: ClientCredentials, tokenValue: string, extra: Record<string, string> = {}, headers: Record<string, string> = {}) =>
  clientPost(base, '/connect/revoke', who, { token: tokenValue, ...extra }, headers);

/** Redeems a code at the token endpoint; confidential clients authenticate with Basic. */
export const redeem = (base: string, code: string, redirectUri: string, verifier: string, who: ClientCredentials) =>
  token(base, who, { grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: verifier });

/** Userinfo with the token as a Bearer header (none when undefined); GET unless told. */
export function userinfo(base: string, accessToken: string | undefined, init: { method?: 'GET' | 'POST'; headers?: Record<string, string> } = {}): Promise<HttpResponse> {
  const authorization: Record<string, string> = accessToken === undefined ? {} : { authorization: `Bearer ${accessToken}` };
  return request(`${base}/connect/userinfo`, { method: init.method ?? 'GET', headers: { ...authorization, ...init.headers } });
}

/** A JWT's header and payload, unverified (the test reads what the service put in). */
export function decodeJwt(jwt: unknown): { header: Record<string, unknown>; payload: Record<string, unknown> } {
  expect(typeof jwt).toBe('string');
  const [header, payload] = String(jwt).split('.');
  const decode = (part: string | undefined) => JSON.parse(Buffer.from(part ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
  return { header: decode(header), payload: decode(payload) };
}

// ---------------------------------------------------------------------------------------------
// The authorization request and the pages

export function authorizeUrl(base: string, params: Record<string, string | undefined>): string {
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) query.set(k, v);
  return `${base}/connect/authorize?${query.toString()}`;
}

/** The usual parameters of a valid request; override or drop (undefined) any of them. */
export function codeRequest(
  base: string,
  clientId: string,
  redirectUri: string,
  challenge: string,
  extra: Record<string, string | undefined> = {},
): string {
  return authorizeUrl(base, {
    client_id: clientId,
    response_type: 'code',
    redirect_uri: redirectUri,
    scope: 'openid',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: randomBytes(8).toString('hex'),
    ...extra,
  });
}

export interface Begun {
  /** The first page the service shows (or the redirect that leaves it). */
  page: Page;
  verifier: string;
  state: string;
}

/** Sends a code request with a fresh PKCE pair and state, and follows it to the first page the service shows. */
export async function beginAuthorization(browser: Browser, base: string, clientId: string, redirectUri: string, extra: Record<string, string> = {}): Promise<Begun> {
  const { verifier, challenge } = pkce();
  const state = randomBytes(8).toString('hex');
  const page = await browser.follow(await browser.get(codeRequest(base, clientId, redirectUri, challenge, { state, ...extra })), base);
  return { page, verifier, state };
}

/** Whether the page's form posts to the step `step` of the interaction (sign-in, consent, otp, ...). */
export const formTo = (page: Page, step: string) => new RegExp(`<form[^>]*action="[^"]*/${step}"`).test(page.body);

export const isSignInPage = (page: Page) => page.status === 200 && formTo(page, 'sign-in') && page.body.includes('name="password"');
export const isConsentPage = (page: Page) => page.status === 200 && formTo(page, 'consent') && page.body.includes('value="allow"');

export function expectSignInPage(page: Page): void {
  expect(page.status, page.body.slice(0, 300)).toBe(200);
  expect(isSignInPage(page), 'the sign-in page').toBe(true);
}

export function expectConsentPage(page: Page): void {
  expect(page.status, page.body.slice(0, 300)).toBe(200);
  expect(isConsentPage(page), 'the consent page').toBe(true);
}

export async function submitSignIn(browser: Browser, page: Page, user: User): Promise<Page> {
  const form = readForm(page.body, page.url);
  return browser.post(form.action, { ...form.fields, username: user.username, password: user.password });
}

export async function submitConsent(browser: Browser, page: Page, decision: 'allow' | 'deny'): Promise<Page> {
  const form = readForm(page.body, page.url);
  return browser.post(form.action, { ...form.fields, decision });
}

/**
 * Walks the pages of an authorization the way a user would: signs in when asked, allows when
 * asked, and returns the answer that leaves the service (normally a redirect to the client).
 */
export async function authorizeThroughPages(browser: Browser, base: string, url: string, user: User): Promise<Page> {
  let page = await browser.follow(await browser.get(url), base);
  if (isSignInPage(page)) page = await browser.follow(await submitSignIn(browser, page, user), base);
  if (isConsentPage(page)) page = await browser.follow(await submitConsent(browser, page, 'allow'), base);
  return page;
}

/** The code from a 302 to `redirectUri` (query response mode), after checking the redirect itself. */
export function codeFrom(page: Page, redirectUri: string, issuer: string): string {
  expect(page.status, page.body.slice(0, 300)).toBe(302);
  expect(page.location?.startsWith(`${redirectUri}?`), page.location).toBe(true);
  const params = new URL(page.location ?? '').searchParams;
  expect(params.get('iss')).toBe(issuer);
  expect(params.get('error')).toBeNull();
  const code = params.get('code');
  expect(code).toBeTruthy();
  return code ?? '';
}

/**
 * Signs `who` in through the pages of the browser (when the browser has no session yet) and
 * returns the authorization code delivered to `redirectUri`, with its verifier.
 */
export async function authorize(
  browser: Browser, base: string, clientId: string, redirectUri: string, who: User, scope: string,
): Promise<{ code: string; verifier: string }> {
  const begun = await beginAuthorization(browser, base, clientId, redirectUri, { scope });
  let page = begun.page;
  if (isSignInPage(page)) page = await browser.follow(await submitSignIn(browser, page, who), base);
  expect(page.status, page.body.slice(0, 500)).toBe(302);
  expect(page.location?.startsWith(`${redirectUri}?`), page.location).toBe(true);
  const params = new URL(page.location ?? '').searchParams;
  expect(params.get('error'), params.get('error_description') ?? '').toBeNull();
  expect(params.get('state')).toBe(begun.state);
  return { code: params.get('code') ?? '', verifier: begun.verifier };
}

export { Browser, readForm, type Page };
