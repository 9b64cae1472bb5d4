/**
 * Mail settings driven from outside: `idp serve` with a mail server (the start line, /metrics, no
 * password anywhere) or a bad IDP_SMTP_URL (one line), and `idp doctor`'s mail check against a
 * real SMTP server: signed in, a wrong password, and production's STARTTLS off loopback.
 */
import { networkInterfaces } from 'node:os';
import { afterAll, describe, expect, it } from 'vitest';
import { outputWhen, runIdp, startServer, tempDir, type RunningServer } from '../helpers/process.ts';
import { startSmtpServer, type SmtpCatcher } from '../helpers/smtp.ts';

const IDP_SECRET = 'f'.repeat(64);
const PASSWORD = 'hunter2-mail';

interface CheckLine { name: string; status: string; detail: string; fix?: string }

async function doctorMailLine(env: Record<string, string>): Promise<{ check: CheckLine | undefined; output: string }> {
  const result = await runIdp(['doctor', '--json'], env);
  const output = result.stdout + result.stderr;
  const report = JSON.parse(result.stdout) as { checks: CheckLine[] };
  return { check: report.checks.find((c) => c.name === 'mail'), output };
}

describe('idp doctor checks the mail server', () => {
  const dir = tempDir();
  const servers: SmtpCatcher[] = [];
  afterAll(async () => {
    for (const server of servers) await server.close();
    dir.remove();
  });
  // Nothing listens at the base URL: only the mail line is judged here.
  const env = (extra: Record<string, string>) => ({ IDP_SECRET, IDP_DATA_DIR: dir.path, IDP_BASE_URL: 'http://127.0.0.1:9', ...extra });

  it('ok when it signs in; FAIL naming the refusal, without the password, when the password is wrong', async () => {
    const server = await startSmtpServer({ auth: { user: 'idp', pass: PASSWORD } });
    servers.push(server);
    const good = await doctorMailLine(env({ IDP_SMTP_URL: server.url }));
    expect(good.check).toMatchObject({ status: 'ok', detail: `smtp 127.0.0.1:${server.port} (STARTTLS when offered) answers, signed in as idp` });
    const bad = await doctorMailLine(env({ IDP_SMTP_URL: server.url.replace(PASSWORD, `${PASSWORD}-wrong`) }));
    expect(bad.check?.status).toBe('FAIL');
    expect(bad.check?.detail).toMatch(/^smtp 127\.0\.0\.1:\d+ \(STARTTLS when offered\) does not work: .*535/);
    expect(bad.check?.fix).toContain('IDP_SMTP_URL');
    expect(bad.output).not.toContain(PASSWORD);
    expect(server.authFailures()).toBe(1);
  });

  it('skips without IDP_SMTP_URL outside production', async () => {
    expect((await doctorMailLine(env({}))).check).toMatchObject({ status: 'skip', detail: 'IDP_SMTP_URL is unset: messages go to the log' });
  });

  const outside = Object.values(networkInterfaces()).flat().find((a) => a && a.family === 'IPv4' && !a.internal)?.address;
  it.runIf(outside)('FAILs in production for a server off loopback that offers no STARTTLS, before the password is sent', async () => {
    const server = await startSmtpServer({ host: outside, auth: { user: 'idp', pass: PASSWORD } });
    servers.push(server);
    const production = { NODE_ENV: 'production', DATABASE_URL: 'postgres://127.0.0.1:9/idp', REDIS_URL: 'redis://127.0.0.1:9', IDP_ALLOW_HTTP: '1' };
    const refused = await doctorMailLine(env({ ...production, IDP_SMTP_URL: server.url }));
    expect(refused.check).toMatchObject({ status: 'FAIL', detail: expect.stringMatching(/\(STARTTLS required\) does not work: .*STARTTLS/i) });
    expect(refused.check?.fix).toContain('IDP_ALLOW_INSECURE_MAIL=1');
    expect(server.authFailures()).toBe(0);
    expect(refused.output).not.toContain(PASSWORD);
    // Allowed in cleartext on purpose, the same server works.
    const allowed = await doctorMailLine(env({ ...production, IDP_SMTP_URL: server.url, IDP_ALLOW_INSECURE_MAIL: '1' }));
    expect(allowed.check).toMatchObject({ status: 'ok' });
  });
});

describe('idp serve with a mail server', () => {
  const dir = tempDir();
  let server: RunningServer | undefined;
  let smtp: SmtpCatcher | undefined;
  afterAll(async () => {
    await server?.stop();
    await smtp?.close();
    dir.remove();
  });

  it('says where mail goes in the start line, counts mail in /metrics, and prints the password nowhere', async () => {
    smtp = await startSmtpServer({ auth: { user: 'idp', pass: PASSWORD } });
    server = await startServer({ IDP_DATA_DIR: dir.path, LOG_LEVEL: 'info', IDP_SMTP_URL: smtp.url });
    const output = await outputWhen(server, (o) => o.includes('started: '));
    expect(output).toContain(`mail smtp 127.0.0.1:${smtp.port} (STARTTLS when offered)`);
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toContain('idp_mail_sent_total{result="sent"} 0');
    expect(metrics).toContain('idp_mail_sent_total{result="failed"} 0');
    expect(server.output()).not.toContain(PASSWORD);
  });

  it('refuses a bad IDP_SMTP_URL in one line, with an example, without its password', async () => {
    const result = await runIdp(['serve'], { IDP_DATA_DIR: dir.path, IDP_SMTP_URL: `smtp://idp:${PASSWORD}@mail.example.com/path` });
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toStrictEqual([
      'configuration error: IDP_SMTP_URL must be smtp://[user:password@]host[:port], without a path, a query or a fragment (example: IDP_SMTP_URL=smtp://idp:secret@mail.example.com:587)',
    ]);
    expect(result.stderr + result.stdout).not.toContain(PASSWORD);
  });
});
