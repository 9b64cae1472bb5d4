/**
 * `idp doctor` asks the running service what it runs with (GET /config on its management port)
 * and judges by that, not by the environment it is run from: a production service on http under
 * IDP_ALLOW_HTTP with a mail server, checked from a shell with neither NODE_ENV nor IDP_SMTP_URL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, runIdp, startServer, type RunningServer } from '../helpers/process.ts';
import { REDIS_URL, createTestDatabase, postgresAvailable, redisAvailable, type TestDatabase } from '../helpers/services.ts';
import { startSmtpServer, type SmtpCatcher } from '../helpers/smtp.ts';

const IDP_SECRET = 'c'.repeat(64);
const MAIL_PASSWORD = 'mail-password-never-shown';

interface CheckLine { name: string; status: string; detail: string; fix?: string }

describe.runIf(postgresAvailable && redisAvailable)('idp doctor judges by what the running service says', () => {
  let db: TestDatabase;
  let smtp: SmtpCatcher;
  let server: RunningServer;
  let managementPort: number;
  /** The operator's shell: the database, the store and the management port, no mail server, not production. */
  const shell = () => ({ IDP_SECRET, DATABASE_URL: db.url, REDIS_URL, IDP_BASE_URL: server.url, HOST: '127.0.0.1', PORT: String(server.port), IDP_MANAGEMENT_PORT: String(managementPort) });

  beforeAll(async () => {
    db = await createTestDatabase();
    smtp = await startSmtpServer({ auth: { user: 'idp', pass: MAIL_PASSWORD } });
    managementPort = await freePort();
    server = await startServer({
      NODE_ENV: 'production', IDP_ALLOW_HTTP: '1', IDP_SECRET, DATABASE_URL: db.url, REDIS_URL,
      IDP_MANAGEMENT_PORT: String(managementPort), IDP_SMTP_URL: smtp.url,
    }, undefined, { readyPath: '/healthz' });
  });
  afterAll(async () => {
    await server?.stop();
    await smtp?.close();
    await db?.drop();
  });

  async function doctor(env: Record<string, string>, args: string[] = []): Promise<Map<string, CheckLine>> {
    const result = await runIdp(['doctor', '--json', '--url', server.url, ...args], env);
    expect(result.stderr).toBe('');
    return new Map((JSON.parse(result.stdout) as { checks: CheckLine[] }).checks.map((check) => [check.name, check]));
  }

  it('serves its non-secret facts on the management port only', async () => {
    const answer = await fetch(`http://127.0.0.1:${managementPort}/config`);
    expect(answer.status).toBe(200);
    const text = await answer.text();
    expect(JSON.parse(text)).toMatchObject({
      service: 'idp', mode: 'production', base_url: server.url, allow_http: true, admin_api: 'public', sign_in_source: 'local',
      database: { kind: 'postgres' }, store: { kind: 'redis', where: `redis ${new URL(REDIS_URL).host}` },
      mail: { configured: true, server: `smtp 127.0.0.1:${smtp.port} (STARTTLS when offered)` },
      versions: { service: expect.any(String), node: expect.any(String) },
    });
    expect(text).not.toContain(MAIL_PASSWORD);
    expect(text).not.toContain(IDP_SECRET);
    expect((await fetch(`${server.url}/config`)).status).toBe(404);
  });

  it("reports the service's mail server and production http, though this shell has neither", async () => {
    const checks = await doctor(shell());
    expect(checks.get('service')).toMatchObject({ status: 'ok', detail: expect.stringContaining(`mail smtp 127.0.0.1:${smtp.port}`) });
    expect(checks.get('service')?.detail).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/config: production, version /);
    expect(checks.get('mail')).toMatchObject({
      status: 'skip',
      detail: `the service sends mail through smtp 127.0.0.1:${smtp.port} (STARTTLS when offered); not tried from here: IDP_SMTP_URL (with its password) is unset in this environment`,
    });
    expect(checks.get('https')).toMatchObject({ status: 'warn', detail: expect.stringMatching(/^plain http URL in production \(IDP_ALLOW_HTTP=1\)/) });
    expect(checks.get('database')?.status).toBe('ok');
    expect(checks.get('store')?.status).toBe('ok');
  });

  it('tries the mail server from here when this shell has it too; names a database that is not the service\'s', async () => {
    const checks = await doctor({ ...shell(), IDP_SMTP_URL: smtp.url });
    expect(checks.get('mail')).toMatchObject({ status: 'ok', detail: `smtp 127.0.0.1:${smtp.port} (STARTTLS when offered) answers, signed in as idp` });
    const elsewhere = await doctor({ ...shell(), REDIS_URL: 'redis://127.0.0.1:1' });
    expect(elsewhere.get('store')).toMatchObject({ status: 'warn', detail: `this environment's store (redis 127.0.0.1:1) is not the service's (redis ${new URL(REDIS_URL).host}, as the service says)` });
  });

  it('takes the management port from --management-url, and says when none answers', async () => {
    const { IDP_MANAGEMENT_PORT: _unset, ...without } = shell();
    const told = await doctor(without, ['--management-url', `http://127.0.0.1:${managementPort}`]);
    expect(told.get('service')?.status).toBe('ok');
    expect(told.get('mail')?.status).toBe('skip');
    const none = await doctor(without);
    expect(none.get('service')).toMatchObject({ status: 'skip', detail: 'no management port to ask (IDP_MANAGEMENT_PORT unset here, no --management-url): the checks judge by this environment' });
    expect(none.get('mail')).toMatchObject({ status: 'skip', detail: 'IDP_SMTP_URL is unset: messages go to the log' });
    const silent = await doctor(without, ['--management-url', 'http://127.0.0.1:9']);
    expect(silent.get('service')?.status).toBe('warn');
  });
});
