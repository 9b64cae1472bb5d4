/**
 * Audit lines an operator can act on, read from the log of one `idp serve` with
 * IDP_TRUST_PROXY=true (each caller presents its address in X-Forwarded-For and its own
 * X-Request-Id): every audit event carries the request id, the source address and the client;
 * sign-in events name the account typed, canonically (never the password); failed client
 * authentication at the token, introspection and revocation endpoints is an audit event with its
 * reason; request lines carry the source address. A webhook of a sign-in carries the same request
 * id, source address and client as its log line.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresAvailable } from '../helpers/services.ts';
import { outputWhen, type RunningServer } from '../helpers/process.ts';
import { waitUntil } from '../helpers/waits.ts';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.ts';
import { AddressedBrowser, basic, codeOf, expectKind, nextAddress, signIn, startAuthorization, type Page } from './account-support.ts';
import { ALICE, SERVICE_SECRET, WEB_REDIRECT, WEB_SECRET, seedOf, serviceClient, startDeployment, webClient, type Deployment } from './operations-support.ts';

const WRONG_PASSWORD = 'an audited wrong password 4711';
const WRONG_SECRET = 'a-wrong-client-secret-0123456789abcdefgh';
type Line = Record<string, unknown>;

let requestCount = 0;
const nextRequestId = () => `audit-${++requestCount}`;

/** A browser from its own address whose every request carries a request id of the test's. */
class TracedBrowser extends AddressedBrowser {
  readonly ids: Array<{ id: string; method: string; path: string }> = [];
  override request(url: string, init: RequestInit = {}): Promise<Page> {
    const id = nextRequestId();
    this.ids.push({ id, method: init.method ?? 'GET', path: new URL(url).pathname });
    const headers = new Headers(init.headers);
    headers.set('x-request-id', id);
    return super.request(url, { ...init, headers });
  }
  /** The id of the last request to a path ending in `suffix`. */
  lastId(method: string, suffix: string): string {
    return [...this.ids].reverse().find((r) => r.method === method && r.path.endsWith(suffix))?.id ?? '';
  }
}

describe.runIf(postgresAvailable)('audit lines', () => {
  let deployment: Deployment;
  let server: RunningServer;
  let receiver: Receiver;
  const lines = (): Line[] => server.output().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Line);
  const byRequest = (id: string) => lines().filter((l) => l.reqId === id);

  beforeAll(async () => {
    receiver = await startReceiver({ status: 204 });
    deployment = await startDeployment({
      seed: seedOf([webClient('web'), serviceClient('service'), serviceClient('expired'), serviceClient('off')], [ALICE]),
      env: { IDP_TRUST_PROXY: 'true' },
      async prepare({ idp, sql }) {
        await sql(`UPDATE clients SET secret_expires_at = now() - interval '1 day' WHERE client_id = 'expired'`);
        await sql(`UPDATE clients SET enabled = false WHERE client_id = 'off'`);
        const added = await idp(['webhooks', 'add', '--url', `${receiver.url}/sign-ins`, '--event', 'sign_in']);
        expect(added.code, added.stderr).toBe(0);
      },
    });
    server = deployment.servers[0] as RunningServer;
  });
  afterAll(async () => {
    await deployment?.stop();
    await receiver?.close();
  });

  /** The `data` of the one delivery of `type` for request `id` at the receiver. */
  const deliveredFor = (id: string, type: string) => waitUntil(`the ${type} of ${id} delivered`, () => receiver.received
    .map((r) => JSON.parse(r.body) as { type: string; data: Record<string, unknown> })
    .find((event) => event.type === type && event.data.request_id === id)?.data);

  /** A form POST from `address` with a request id of its own; returns the id and the answer. */
  async function post(path: string, address: string, form: Record<string, string>, authorization?: string) {
    const id = nextRequestId();
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', 'x-request-id': id, 'x-forwarded-for': address };
    if (authorization) headers.authorization = authorization;
    const res = await fetch(`${server.url}${path}`, { method: 'POST', headers, body: new URLSearchParams(form).toString() });
    return { id, status: res.status, body: (await res.json().catch(() => ({}))) as Record<string, unknown> };
  }

  /** The one audit line of `event` written for request `id`, after checking what every audit line carries. */
  async function auditOf(id: string, event: string, address: string): Promise<Line> {
    // Written asynchronously: wait for the line, however long a busy machine takes to write it.
    await outputWhen(server, () => byRequest(id).some((l) => l.event === event));
    const found = byRequest(id).filter((l) => l.event === event);
    expect(found, `${event} for ${id}`).toHaveLength(1);
    const line = found[0] as Line;
    expect(line).toMatchObject({ audit: true, reqId: id, source_address: address });
    return line;
  }

  it('sign-in events: the request id, the source address, the client and the canonical account name, never the password', async () => {
    const browser = new TracedBrowser();
    const started = await startAuthorization(browser, server.url);
    expectKind(started.page, 'sign-in');
    const failed = await signIn(browser, started.page, server.url, '  ALICE ', WRONG_PASSWORD);
    expectKind(failed, 'sign-in');
    const failedId = browser.lastId('POST', '/sign-in');
    const failure = await auditOf(failedId, 'sign_in', browser.address);
    expect(failure).toMatchObject({ result: 'failure', step: 'password', reason: 'invalid_credentials', client_id: 'web', username: 'alice' });
    // The webhook says who and from where as the line does: the id the answer named, the address
    // the proxy presented (IDP_TRUST_PROXY), the client.
    expect(failed.headers.get('x-request-id')).toBe(failedId);
    expect(await deliveredFor(failedId, 'sign_in')).toStrictEqual({
      request_id: failedId, source_address: browser.address, client_id: 'web', result: 'failure', step: 'password', reason: 'invalid_credentials', username: 'alice',
    });

    const signedIn = await signIn(browser, failed, server.url, 'Alice', ALICE.password);
    const code = codeOf(signedIn, started.state);
    const success = await auditOf(browser.lastId('POST', '/sign-in'), 'sign_in', browser.address);
    expect(success).toMatchObject({ result: 'success', client_id: 'web', username: 'alice', amr: ['pwd'] });
    expect(typeof success.user_id).toBe('string');

    // The code exchange, from the relying party's own address.
    const rp = nextAddress();
    const exchange = await post('/connect/token', rp, { grant_type: 'authorization_code', code, redirect_uri: WEB_REDIRECT, code_verifier: started.verifier }, basic('web', WEB_SECRET));
    expect(exchange.status, JSON.stringify(exchange.body)).toBe(200);
    expect(await auditOf(exchange.id, 'token_issued', rp)).toMatchObject({ grant: 'authorization_code', client_id: 'web', user_id: success.user_id });

    const output = server.output();
    expect(output).not.toContain(WRONG_PASSWORD);
    expect(output).not.toContain(ALICE.password);
  });

  describe('failed client authentication is an audit event with its reason', () => {
    const wrong = (clientId: string) => basic(clientId, WRONG_SECRET);
    const cases: Array<[string, string, Record<string, string>, string | undefined, string, string | undefined]> = [
      // endpoint, what, form, Authorization, reason, client_id audited
      ['/connect/token', 'an unknown client', { grant_type: 'client_credentials' }, wrong('nobody-at-all'), 'unknown_client', 'nobody-at-all'],
      ['/connect/token', 'a wrong secret (Basic)', { grant_type: 'client_credentials' }, wrong('service'), 'bad_secret', 'service'],
      ['/connect/token', 'a wrong secret (post)', { grant_type: 'client_credentials', client_id: 'service', client_secret: WRONG_SECRET }, undefined, 'bad_secret', 'service'],
      ['/connect/token', 'an expired secret', { grant_type: 'client_credentials' }, basic('expired', SERVICE_SECRET), 'expired_secret', 'expired'],
      ['/connect/token', 'a disabled client', { grant_type: 'client_credentials' }, basic('off', SERVICE_SECRET), 'disabled', 'off'],
      ['/connect/token', 'no client authentication', { grant_type: 'client_credentials' }, undefined, 'no_credentials', undefined],
      ['/connect/token', 'an unreadable Basic header', { grant_type: 'client_credentials' }, 'Basic !!!not-base64', 'malformed_credentials', undefined],
      ['/connect/introspect', 'an unknown client', { token: 'whatever-token-value' }, wrong('nobody-else'), 'unknown_client', 'nobody-else'],
      ['/connect/introspect', 'a wrong secret', { token: 'whatever-token-value' }, wrong('web'), 'bad_secret', 'web'],
      ['/connect/introspect', 'an expired secret', { token: 'whatever-token-value' }, basic('expired', SERVICE_SECRET), 'expired_secret', 'expired'],
      ['/connect/revoke', 'a wrong secret', { token: 'whatever-token-value' }, wrong('web'), 'bad_secret', 'web'],
      ['/connect/revoke', 'a disabled client', { token: 'whatever-token-value' }, basic('off', SERVICE_SECRET), 'disabled', 'off'],
    ];

    it.each(cases)('%s: %s', async (path, _what, form, authorization, reason, clientId) => {
      const address = nextAddress();
      const answer = await post(path, address, form, authorization);
      expect(answer.status).toBe(401);
      expect(answer.body.error).toBe('invalid_client');
      const line = await auditOf(answer.id, 'client_authentication_failed', address);
      expect(line.reason).toBe(reason);
      expect(line.client_id).toBe(clientId);
      expect(server.output()).not.toContain(WRONG_SECRET);
    });

    it('a right secret is no audit event of that kind', async () => {
      const address = nextAddress();
      const answer = await post('/connect/token', address, { grant_type: 'client_credentials' }, basic('service', SERVICE_SECRET));
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect(await auditOf(answer.id, 'token_issued', address)).toMatchObject({ client_id: 'service', grant: 'client_credentials' });
      expect(byRequest(answer.id).filter((l) => l.event === 'client_authentication_failed')).toHaveLength(0);
    });
  });

  it('request lines carry the source address the proxy named', async () => {
    const address = nextAddress();
    const id = nextRequestId();
    const res = await fetch(`${server.url}/.well-known/openid-configuration`, { headers: { 'x-request-id': id, 'x-forwarded-for': address } });
    expect(res.status).toBe(200);
    await outputWhen(server, () => byRequest(id).some((l) => l.msg === 'request'));
    const own = byRequest(id).filter((l) => l.msg === 'request');
    expect(own).toHaveLength(1);
    expect(own[0]).toMatchObject({ source_address: address, status: 200 });
    for (const line of lines().filter((l) => l.msg === 'request')) expect(typeof line.source_address, JSON.stringify(line)).toBe('string');
  });
});
