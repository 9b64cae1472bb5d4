/**
 * `idp users reset-mfa` tells the user by mail, from outside as an administrator runs it: the
 * command against a real SMTP server on loopback (the smtp-server package) and a PostgreSQL
 * database of its own, users seeded with an address and an authenticator app. The command waits
 * for the mail server before it exits, so the message is in the mailbox once the process is gone.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runIdp, seedWith, type RunResult } from '../helpers/process.ts';
import { createTestDatabase, postgresAvailable, type TestDatabase } from '../helpers/services.ts';
import { startSmtpServer, type SmtpCatcher } from '../helpers/smtp.ts';
import { IDP_SECRET, seedFor, type SeedUser } from './account-support.ts';

const sfx = randomBytes(3).toString('hex');
const TOTP_SECRET = 'JBSWY3DPEHPK3PXP';
const user = (name: string): SeedUser => ({
  username: `${name}-${sfx}`, password: `${name} lost the phone 7`, totp_secret: TOTP_SECRET, email: `${name}-${sfx}@example.test`,
});
const MAIA = user('maia');
const NOEL = user('noel');
const REFUSED = user('refused');
/** Has an authenticator app but no address: nobody to mail. */
const NOADDR: SeedUser = { username: `noaddr-${sfx}`, password: 'noaddr lost the phone 7', totp_secret: TOTP_SECRET };
const BRAND = 'Acme sign-in';
const SUBJECT = `${BRAND}: A second factor was removed`;

/** stderr without the JSON log lines (audit events, the log mailer's lines). */
const plainLines = (result: RunResult) => result.stderr.split('\n').filter((l) => l !== '' && !l.startsWith('{'));

describe.runIf(postgresAvailable)('idp users reset-mfa mails the user the security notice', () => {
  let db: TestDatabase;
  let smtp: SmtpCatcher;
  let env: Record<string, string>;

  beforeAll(async () => {
    db = await createTestDatabase();
    smtp = await startSmtpServer();
    env = { DATABASE_URL: db.url, IDP_SECRET, IDP_BASE_URL: 'https://id.example.test', IDP_BRAND_NAME: BRAND };
    await seedWith(seedFor([MAIA, NOEL, REFUSED, NOADDR]), env);
  });
  afterAll(async () => {
    await smtp?.close();
    await db?.drop();
  });

  const withMail = () => ({ ...env, IDP_SMTP_URL: smtp.url, IDP_MAIL_FROM: 'Acme <no-reply@acme.example>' });
  const factorsOf = async (u: SeedUser) => {
    const shown = await runIdp(['users', 'show', u.username, '--json'], env);
    expect(shown.code, shown.stderr).toBe(0);
    return (JSON.parse(shown.stdout) as { second_factors: Array<{ kind: string }> }).second_factors.map((f) => f.kind);
  };

  it('mails mfa_removed to the user\'s address, handed to the mail server before the command exits; nothing for "nothing to reset"', async () => {
    expect(await factorsOf(MAIA)).toEqual(['totp']);
    const reset = await runIdp(['users', 'reset-mfa', MAIA.username], withMail());
    expect(reset.code, reset.stderr).toBe(0);
    expect(reset.stdout).toContain(`user ${MAIA.username}: second factors removed (totp)`);
    expect(plainLines(reset)).toEqual([]);
    // No wait: the process is gone, so the message has been delivered already.
    const mailed = smtp.messages.filter((m) => m.to === MAIA.email);
    expect(mailed).toHaveLength(1);
    expect(mailed[0]).toMatchObject({ subject: SUBJECT, from: 'Acme <no-reply@acme.example>' });
    expect(mailed[0]?.text).toContain('A second factor was removed from your account.');
    expect(mailed[0]?.text).toContain('An administrator reset your second factors; you will set up a new one at your next sign-in.');
    expect(await factorsOf(MAIA)).toEqual([]);

    const again = await runIdp(['users', 'reset-mfa', MAIA.username, '--json'], withMail());
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ username: MAIA.username, removed: [] });
    expect(smtp.messages.filter((m) => m.to === MAIA.email)).toHaveLength(1);
  });

  it('mails nobody for a user without an address, and still resets', async () => {
    const before = smtp.messages.length;
    const reset = await runIdp(['users', 'reset-mfa', NOADDR.username], withMail());
    expect(reset.code, reset.stderr).toBe(0);
    expect(reset.stdout).toContain('second factors removed (totp)');
    expect(plainLines(reset)).toEqual([]);
    expect(smtp.messages.length).toBe(before);
    expect(await factorsOf(NOADDR)).toEqual([]);
  });

  it('without IDP_SMTP_URL resets all the same: the notice is the log mailer\'s line, nothing reaches a mail server', async () => {
    const before = smtp.messages.length;
    const reset = await runIdp(['users', 'reset-mfa', NOEL.username], { ...env, LOG_LEVEL: 'info' });
    expect(reset.code, reset.stderr).toBe(0);
    expect(reset.stdout).toContain(`user ${NOEL.username}: second factors removed (totp)`);
    expect(plainLines(reset)).toEqual([]);
    const logged = reset.stderr.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(logged.find((l) => l.mail === true)).toMatchObject({ to: NOEL.email, subject: SUBJECT });
    expect(smtp.messages.length).toBe(before);
    expect(await factorsOf(NOEL)).toEqual([]);
  });

  it('a mail server that refuses: the reset stands (exit 0) and one warning line names the notice, without the URL\'s password', async () => {
    const refusing = await startSmtpServer({ behaviour: 'refuse', auth: { user: 'idp', pass: 'sm7p-s3cret-pass' } });
    try {
      const reset = await runIdp(['users', 'reset-mfa', REFUSED.username], { ...env, IDP_SMTP_URL: refusing.url });
      expect(reset.code, reset.stderr).toBe(0);
      expect(reset.stdout).toContain(`user ${REFUSED.username}: second factors removed (totp)`);
      const warnings = plainLines(reset);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(new RegExp(`^warning: the security notice \\(second factors removed\\) could not be mailed to user ${REFUSED.username}: mail not sent: .*550`));
      expect(reset.stderr).not.toContain('sm7p-s3cret-pass');
      expect(refusing.connections()).toBeGreaterThan(0);
      expect(refusing.messages).toHaveLength(0);
      expect(await factorsOf(REFUSED)).toEqual([]);
    } finally {
      await refusing.close();
    }
  });
});
