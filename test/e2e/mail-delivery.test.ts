/**
 * The SMTP mailer against a real SMTP server (smtp-server on loopback): what arrives, TLS as
 * production demands it, and a mail server that refuses or hangs, which never holds up the
 * caller and is counted in /metrics' series.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig, type Config } from '../../src/config.ts';
import { NO_MAILER } from '../../src/mail/mailer.ts';
import { passwordRecoveryMessage, securityNoticeMessage } from '../../src/mail/messages.ts';
import { createMailer, mailBrandOf } from '../../src/mail/setup.ts';
import { createSmtpMailer, type SmtpMailer } from '../../src/mail/smtp-mailer.ts';
import { createMetrics } from '../../src/metrics.ts';
import { codeIn, linksIn, selfSignedCertificate, startSmtpServer, type SmtpCatcher } from '../helpers/smtp.ts';
import { waitUntil } from '../helpers/waits.ts';

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const one of open.splice(0).reverse()) await one.close();
});

async function catcher(options: Parameters<typeof startSmtpServer>[0] = {}): Promise<SmtpCatcher> {
  const server = await startSmtpServer(options);
  open.push(server);
  return server;
}

function configOf(env: Record<string, string>): Config {
  const parsed = parseConfig({ IDP_BASE_URL: 'https://id.example.com', ...env });
  if (!parsed.ok) throw new Error(parsed.message);
  return parsed.config;
}

/** The log lines a mailer writes, as JSON text (what an operator's log would hold). */
function logLines() {
  const lines: string[] = [];
  const write = (level: string) => (fields: Record<string, unknown>, message: string) => void lines.push(JSON.stringify({ level, ...fields, msg: message }));
  return { lines, log: { info: write('info'), warn: write('warn') } };
}

function mailerOf(config: Config, log = logLines().log): SmtpMailer {
  const mailer = createMailer(config, log) as SmtpMailer;
  open.push(mailer);
  return mailer;
}

/** The mail server of IDP_SMTP_URL=url as the configuration reads it, requiring STARTTLS or not. */
function smtpOf(url: string, requireTls = false): NonNullable<Config['mail']['smtp']> {
  const smtp = configOf({ IDP_SMTP_URL: url }).mail.smtp;
  if (!smtp) throw new Error('no mail server');
  return { ...smtp, requireTls };
}

const CODE = { code: '48213907', link: 'https://id.example.com/account/recover?t=Zm9vYmFy', minutes: 15 };

async function mailSeries(mailer: SmtpMailer): Promise<string> {
  return (await createMetrics({ mail: mailer }).render()).split('\n').filter((l) => l.startsWith('idp_mail_sent_total')).join('\n');
}

describe('the SMTP mailer', () => {
  it('delivers a branded message with a text part and an HTML part, from IDP_MAIL_FROM, signed in with the URL\'s credentials', async () => {
    const server = await catcher({ auth: { user: 'idp@example.com', pass: 'p@ss w0rd' } });
    const config = configOf({ IDP_SMTP_URL: server.url, IDP_MAIL_FROM: 'Acme sign-in <no-reply@acme.example>', IDP_BRAND_NAME: 'Acme Ünïcode', IDP_BRAND_COLOR: '#0b5cad' });
    const mailer = mailerOf(config);
    expect(mailer.available).toBe(true);
    mailer.send(passwordRecoveryMessage('ann@example.com', mailBrandOf(config), CODE));
    const mail = await server.waitForMessage((m) => m.to === 'ann@example.com');
    expect(mail).toMatchObject({ from: '"Acme sign-in" <no-reply@acme.example>', subject: 'Your Acme Ünïcode password reset code', user: 'idp@example.com' });
    expect(codeIn(mail)).toBe('48213907');
    expect(linksIn(mail)).toContain(CODE.link);
    expect(mail.text).toContain('— Acme Ünïcode');
    expect(mail.html).toContain('<p style="color:#0b5cad">— Acme Ünïcode</p>');
    expect(mail.html).toContain('48213907');
    await waitUntil('the message counted as sent', async () => (await mailSeries(mailer)).includes('idp_mail_sent_total{result="sent"} 1'));
  });

  it('sends from no-reply@ the host of IDP_BASE_URL by default, signed with that host', async () => {
    const server = await catcher();
    const config = configOf({ IDP_SMTP_URL: server.url });
    mailerOf(config).send(securityNoticeMessage('bob@example.com', mailBrandOf(config), 'password_changed', new Date(0)));
    const mail = await server.waitForMessage();
    expect(mail.from).toBe('no-reply@id.example.com');
    expect(mail.subject).toBe('id.example.com: Your password was changed');
  });

  it('upgrades with STARTTLS when production requires it, and refuses a server that does not offer it', async () => {
    const certificate = selfSignedCertificate();
    const secure = await catcher({ tls: certificate });
    const plain = await catcher({ auth: { user: 'idp', pass: 'hunter2-secret' } });
    const { lines, log } = logLines();
    const withTls = createSmtpMailer({ smtp: smtpOf(secure.url, true), from: 'no-reply@id.example.com', warn: log.warn, tls: { ca: certificate.cert } });
    const withoutTls = createSmtpMailer({ smtp: smtpOf(plain.url, true), from: 'no-reply@id.example.com', warn: log.warn });
    open.push(withTls, withoutTls);
    const message = passwordRecoveryMessage('ann@example.com', { name: 'Acme' }, CODE);
    withTls.send(message);
    withoutTls.send(message);
    expect((await secure.waitForMessage()).tls).toBe(true);
    await waitUntil('the refusal counted', () => withoutTls.results().failed === 1);
    expect(plain.messages).toHaveLength(0);
    // Refused before AUTH: the password never crossed the network in cleartext.
    expect(plain.authFailures()).toBe(0);
    const failure = lines.find((l) => l.includes('mail not sent')) ?? '';
    expect(failure).toMatch(/STARTTLS/i);
    expect(failure).toContain('ann@example.com');
    for (const secret of ['hunter2-secret', '48213907', 'reset', CODE.link]) expect(lines.join('\n')).not.toContain(secret);
  });

  it('mails exactly the stored address, and drops (logging, counting) a stored value that is more than an address', async () => {
    const server = await catcher();
    const { lines, log } = logLines();
    const mailer = mailerOf(configOf({ IDP_SMTP_URL: server.url, IDP_MAIL_FROM: 'Acme <no-reply@acme.example>' }), log);
    // As a row written before addresses were checked may hold it: a header parser finds the attacker's address in it.
    mailer.send(passwordRecoveryMessage('<attacker@evil.example>nina', { name: 'Acme' }, CODE));
    mailer.send(passwordRecoveryMessage('nina@example.com', { name: 'Acme' }, CODE));
    await server.waitForMessage((m) => m.to === 'nina@example.com');
    await waitUntil('the hostile one counted as dropped', async () => (await mailSeries(mailer)).includes('idp_mail_sent_total{result="dropped"} 1'));
    expect(server.messages.map((m) => m.to)).toStrictEqual(['nina@example.com']);
    expect(lines.filter((l) => l.includes('"mail dropped"'))).toHaveLength(1);
    expect(lines.join('\n')).not.toContain('48213907');
  });

  it('never holds up the caller: send returns before the server is even reached, and a refusal is logged and counted', async () => {
    const server = await catcher({ behaviour: 'refuse', auth: { user: 'idp', pass: 'hunter2-secret' } });
    const { lines, log } = logLines();
    const mailer = mailerOf(configOf({ IDP_SMTP_URL: server.url }), log);
    mailer.send(passwordRecoveryMessage('ann@example.com', { name: 'Acme' }, CODE));
    expect(server.connections()).toBe(0);
    await waitUntil('the refusal counted in the metrics', async () => (await mailSeries(mailer)).includes('idp_mail_sent_total{result="failed"} 1'));
    expect(lines.filter((l) => l.includes('"mail not sent"'))).toHaveLength(1);
    expect(lines.join('\n')).toContain('550');
    for (const secret of ['hunter2-secret', '48213907', CODE.link]) expect(lines.join('\n')).not.toContain(secret);
  });

  it('gives up on a server that never greets, counting a failure; sends return at once, and a full queue drops what is more', async () => {
    const server = await catcher({ behaviour: 'hang' });
    // One conversation at a time, and a short flush when the test ends, so that the wait is one greeting timeout.
    const mailer = createSmtpMailer({ smtp: smtpOf(server.url), from: 'no-reply@id.example.com', warn: () => {}, concurrency: 1, queueLimit: 4, flushMs: 100 });
    open.push(mailer);
    const notice = (to: string) => securityNoticeMessage(to, { name: 'Acme' }, 'mfa_added', new Date(0));
    for (let i = 0; i < 6; i++) mailer.send(notice(`u${i}@example.com`));
    expect(server.connections()).toBe(0);
    expect(mailer.results()).toStrictEqual({ sent: 0, failed: 0, dropped: 2 });
    await waitUntil('a connection to the hanging server', () => server.connections() > 0);
    // The first message is in flight: there is room for one more.
    mailer.send(notice('late@example.com'));
    expect(mailer.results()).toStrictEqual({ sent: 0, failed: 0, dropped: 2 });
    await waitUntil('the hanging server counted as a failure', async () => /^idp_mail_sent_total\{result="failed"\} [1-9]/m.test(await mailSeries(mailer)));
    expect(await mailSeries(mailer)).toContain('idp_mail_sent_total{result="dropped"} 2');
  });

  it('sends what is queued when closed, and drops (counting and logging) what does not go within the flush time', async () => {
    const server = await catcher();
    const mailer = mailerOf(configOf({ IDP_SMTP_URL: server.url }));
    mailer.send(securityNoticeMessage('ann@example.com', { name: 'Acme' }, 'mfa_removed', new Date(0)));
    await mailer.close();
    expect(server.messages.map((m) => m.to)).toStrictEqual(['ann@example.com']);
    mailer.send(securityNoticeMessage('bob@example.com', { name: 'Acme' }, 'mfa_removed', new Date(0)));
    expect(mailer.results()).toStrictEqual({ sent: 1, failed: 0, dropped: 1 });

    const hanging = await catcher({ behaviour: 'hang' });
    const { lines, log } = logLines();
    const stuck = createSmtpMailer({ smtp: smtpOf(hanging.url), from: 'a@b.example', warn: log.warn, flushMs: 200 });
    stuck.send(securityNoticeMessage('carl@example.com', { name: 'Acme' }, 'mfa_removed', new Date(0)));
    await stuck.close();
    expect(stuck.results().dropped).toBe(1);
    expect(lines.join('\n')).toContain('1 message(s) not sent within 0.2 s of shutting down');
  });
});

describe('without IDP_SMTP_URL', () => {
  it('writes each message to the log outside production, and offers no mail in production', () => {
    const { lines, log } = logLines();
    const mailer = createMailer(configOf({}), log);
    expect(mailer.available).toBe(true);
    mailer.send({ to: 'ann@example.com', subject: 'Hello', text: 'the text', html: '<p>the text</p>' });
    expect(JSON.parse(lines[0] ?? '{}')).toMatchObject({ mail: true, to: 'ann@example.com', subject: 'Hello', text: 'the text' });
    const production = createMailer(configOf({ NODE_ENV: 'production', IDP_SECRET: 'e'.repeat(64), DATABASE_URL: 'postgres://db/idp', REDIS_URL: 'redis://c:6379' }), log);
    expect(production).toBe(NO_MAILER);
    expect(production.available).toBe(false);
  });
});
