/**
 * A seeded service for the administration API's tests, in process or spawned on PostgreSQL and
 * Redis, and a small client for it: tokens by the client credentials grant, calls with JSON, each
 * answer held against the service's OpenAPI document (test/helpers/openapi-answers.ts).
 */
import { httpFetch } from '../helpers/http-transport.ts';
import { startInProcess } from '../helpers/in-process.ts';
import { checkAdminAnswer } from '../helpers/openapi-answers.ts';
import { seedWith, startServer, type RunningServer } from '../helpers/process.ts';
import { createTestDatabase, REDIS_URL, runSql } from '../helpers/services.ts';

export const ADMIN_SECRET = 'automation-secret-0123456789abcdefghijkl';
export const READER_SECRET = 'reader-secret-0123456789abcdefghijklmnop';
export const HOOKS_SECRET = 'webhooks-secret-0123456789abcdefghijklmn';
export const SERVICE_SECRET = 'service-secret-0123456789abcdefghijklmno';
export const ALICE = { username: 'alice', password: 'correct horse battery staple' };

const caller = (client_id: string, client_secret: string, scopes: string[]) => ({
  client_id, client_secret, display_name: client_id, grant_types: ['client_credentials'], scopes,
});

export const ADMIN_SEED = {
  api_scopes: ['orders.read'],
  clients: [
    caller('automation', ADMIN_SECRET, ['admin_api']),
    caller('reader', READER_SECRET, ['admin_api_readonly']),
    caller('hooks', HOOKS_SECRET, ['admin_console_webhooks']),
    caller('service', SERVICE_SECRET, ['orders.read']),
    // Its tokens expire after a second.
    { ...caller('brief', SERVICE_SECRET, ['admin_api']), access_token_lifetime: 1 },
    {
      client_id: 'web', client_secret: 'web-secret-0123456789abcdefghijklmnop', display_name: 'Web shop',
      grant_types: ['authorization_code', 'refresh_token'], scopes: ['openid', 'profile', 'offline_access'], redirect_uris: ['https://rp.test/cb'],
    },
  ],
  users: [{ ...ALICE, given_name: 'Alice', email: 'alice@example.com', roles: ['buyer'] }],
};

export interface AdminSetup {
  base: string;
  api: string;
  sql(text: string, values?: unknown[]): Promise<Record<string, unknown>[]>;
  logs(): string;
  stop(): Promise<void>;
}

export async function startAdminApp(env: Record<string, string> = {}): Promise<AdminSetup> {
  const app = await startInProcess({ seed: ADMIN_SEED, env });
  return { base: app.base, api: `${app.base}/admin/v1`, sql: app.sql, logs: app.logs, stop: app.close };
}

/** A fresh PostgreSQL database and a Redis prefix of its own, seeded, and `count` servers on them. */
export interface ServersSetup extends AdminSetup {
  servers: RunningServer[];
  /** The servers' environment, for `idp` commands on the same database. */
  env: Record<string, string>;
}

export async function startAdminServers(count = 1, env: Record<string, string> = {}): Promise<ServersSetup> {
  const db = await createTestDatabase();
  const common = { DATABASE_URL: db.url, REDIS_URL, IDP_SECRET: 'e'.repeat(64), LOG_LEVEL: 'info', ...env };
  const servers: RunningServer[] = [];
  try {
    for (let i = 0; i < count; i++) servers.push(await startServer(common));
    await seedWith(ADMIN_SEED, common);
  } catch (error) {
    await Promise.all(servers.map((s) => s.stop()));
    await db.drop();
    throw error;
  }
  const first = servers[0] as RunningServer;
  return {
    base: first.url,
    api: `${first.url}/admin/v1`,
    servers,
    env: common,
    sql: (text, values) => runSql(db.url, text, values),
    logs: () => servers.map((s) => s.output()).join(''),
    async stop() {
      await Promise.all(servers.map((s) => s.stop()));
      await db.drop();
    },
  };
}

export interface Answer {
  status: number;
  headers: Headers;
  /** The JSON body (as a test reads it), or the text when it is not JSON; undefined when empty. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a test reads any member of an answer
  body: any;
}

/** An access token of the client credentials grant. */
export async function tokenFor(base: string, clientId: string, secret: string, scope: string): Promise<string> {
  const res = await httpFetch(`${base}/connect/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}` },
    body: new URLSearchParams({ grant_type: 'client_credentials', scope }).toString(),
  });
  const body = (await res.json()) as { access_token?: string };
  if (!body.access_token) throw new Error(`no token for ${clientId}: ${JSON.stringify(body)}`);
  return body.access_token;
}

export interface CallOptions {
  token?: string | undefined;
  /** An object is sent as JSON; a string as it is. */
  body?: unknown;
  contentType?: string;
  headers?: Record<string, string>;
}

/** A call to the API; an answer that its OpenAPI document does not describe fails the test. */
export async function call(url: string, method: string, options: CallOptions = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  let body: string | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    headers['content-type'] = options.contentType ?? (method === 'PATCH' ? 'application/merge-patch+json' : 'application/json');
  }
  const res = await httpFetch(url, { method, headers, ...(body === undefined ? {} : { body }) });
  const text = await res.text();
  let parsed: unknown = text === '' ? undefined : text;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    // Not JSON: kept as text.
  }
  await checkAdminAnswer(url, method, { status: res.status, headers: res.headers, body: parsed });
  return { status: res.status, headers: res.headers, body: parsed };
}

/** A problem document (RFC 9457) with this status, never cached. */
export function isProblem(answer: Answer, status: number): boolean {
  const body = answer.body as Record<string, unknown> | undefined;
  return answer.status === status
    && (answer.headers.get('content-type') ?? '').startsWith('application/problem+json')
    && body?.status === status && typeof body.title === 'string' && typeof body.detail === 'string' && typeof body.type === 'string'
    && (answer.headers.get('cache-control') ?? '').includes('no-store');
}

/** The audit lines of `admin_change` in a log, parsed. */
export function adminChanges(logs: string): Record<string, unknown>[] {
  return logs.split('\n').filter((line) => line.includes('"event":"admin_change"')).map((line) => JSON.parse(line.slice(line.indexOf('{'))) as Record<string, unknown>);
}
