/** IDP_SMTP_URL, IDP_MAIL_FROM and IDP_ALLOW_INSECURE_MAIL as the configuration reads them. */
import { describe, expect, it } from 'vitest';
import { parseConfig, type Config } from '../../src/config.ts';
import { describeStartup, startupLine } from '../../src/config/startup.ts';
import { mailBrandOf } from '../../src/mail/setup.ts';

const SECRET = 'e'.repeat(64);
const PRODUCTION = { NODE_ENV: 'production', IDP_SECRET: SECRET, DATABASE_URL: 'postgres://db/idp', REDIS_URL: 'redis://cache:6379', IDP_BASE_URL: 'https://id.example.com' };

function configOf(env: Record<string, string>): Config {
  const parsed = parseConfig(env);
  if (!parsed.ok) throw new Error(parsed.message);
  return parsed.config;
}

function errorOf(env: Record<string, string>): string {
  const parsed = parseConfig(env);
  if (parsed.ok) throw new Error('the configuration was accepted');
  return parsed.message;
}

describe('IDP_SMTP_URL', () => {
  it('reads the server, the port (587, or 465 for smtps) and the percent-decoded credentials', () => {
    expect(configOf({ IDP_SMTP_URL: 'smtp://mail.example.com' }).mail.smtp).toMatchObject({ host: 'mail.example.com', port: 587, implicitTls: false, user: undefined });
    expect(configOf({ IDP_SMTP_URL: 'smtps://idp%40example.com:p%40ss%3Aw0rd@mail.example.com' }).mail.smtp)
      .toMatchObject({ port: 465, implicitTls: true, user: 'idp@example.com', password: 'p@ss:w0rd' });
    expect(configOf({ IDP_SMTP_URL: 'smtp://[::1]:2525' }).mail.smtp).toMatchObject({ host: '::1', port: 2525 });
    expect(configOf({}).mail.smtp).toBeUndefined();
  });

  it('requires STARTTLS in production unless the server is on loopback, uses smtps, or cleartext is allowed', () => {
    const requireTls = (env: Record<string, string>) => configOf(env).mail.smtp?.requireTls;
    expect(requireTls({ ...PRODUCTION, IDP_SMTP_URL: 'smtp://mail.example.com' })).toBe(true);
    expect(requireTls({ ...PRODUCTION, IDP_SMTP_URL: 'smtp://127.0.0.1:25' })).toBe(false);
    expect(requireTls({ ...PRODUCTION, IDP_SMTP_URL: 'smtp://localhost:25' })).toBe(false);
    expect(requireTls({ ...PRODUCTION, IDP_SMTP_URL: 'smtp://[::1]:25' })).toBe(false);
    expect(requireTls({ ...PRODUCTION, IDP_SMTP_URL: 'smtps://mail.example.com' })).toBe(false);
    expect(requireTls({ ...PRODUCTION, IDP_SMTP_URL: 'smtp://mailpit:1025', IDP_ALLOW_INSECURE_MAIL: '1' })).toBe(false);
    expect(requireTls({ IDP_SMTP_URL: 'smtp://mail.example.com' })).toBe(false);
  });

  it.each([
    ['another scheme', 'http://idp:hunter2@mail.example.com'],
    ['a path', 'smtp://idp:hunter2@mail.example.com/inbox'],
    ['a query', 'smtp://idp:hunter2@mail.example.com?tls.rejectUnauthorized=false'],
    ['a password without a user', 'smtp://:hunter2@mail.example.com'],
    ['a port out of range', 'smtp://idp:hunter2@mail.example.com:70000'],
    ['bad percent-encoding', 'smtp://idp:hunter2%zz@mail.example.com'],
  ])('refuses %s in one line with an example, never quoting the password', (_name, url) => {
    const message = errorOf({ IDP_SMTP_URL: url });
    expect(message.split('\n')).toHaveLength(1);
    expect(message).toMatch(/^configuration error: IDP_SMTP_URL .+ \(example: IDP_SMTP_URL=smtp:\/\/.+\)$/);
    expect(message).not.toContain('hunter2');
  });
});

describe('IDP_MAIL_FROM', () => {
  it('defaults to no-reply@ the host of IDP_BASE_URL, and takes an address with or without a name', () => {
    expect(configOf({ IDP_BASE_URL: 'https://id.example.com:8443/auth' }).mail.from).toBe('no-reply@id.example.com');
    expect(configOf({ IDP_MAIL_FROM: 'Acme <sign-in@acme.example>' }).mail.from).toBe('Acme <sign-in@acme.example>');
  });

  it('refuses what is no address, in one line', () => {
    const message = errorOf({ IDP_MAIL_FROM: 'Acme sign-in' });
    expect(message).toMatch(/^configuration error: IDP_MAIL_FROM must be an email address.*\(example: IDP_MAIL_FROM=.+\)$/);
    expect(message.split('\n')).toHaveLength(1);
  });
});

describe('settings without a mail server', () => {
  it('are warned about at start: they do nothing without IDP_SMTP_URL', () => {
    const warnings = (env: Record<string, string>) => {
      const parsed = parseConfig(env);
      return parsed.ok ? parsed.warnings : [parsed.message];
    };
    expect(warnings({ IDP_MAIL_FROM: 'a@b.example' })).toStrictEqual(['IDP_MAIL_FROM is set but IDP_SMTP_URL is not: no mail is sent through a mail server']);
    expect(warnings({ IDP_MAIL_FROM: 'a@b.example', IDP_SMTP_URL: 'smtp://127.0.0.1' })).toStrictEqual([]);
  });
});

describe('the start line and the brand of the messages', () => {
  it('says where mail goes, and in production without a server that the features needing it are off', () => {
    const line = (env: Record<string, string>) => startupLine(describeStartup(configOf(env)));
    expect(line({ ...PRODUCTION })).toMatch(/, mail off \(IDP_SMTP_URL unset: password recovery by mail.* not offered\)$/);
    expect(line({})).toMatch(/, mail to the log \(IDP_SMTP_URL unset\)$/);
    const withServer = line({ ...PRODUCTION, IDP_SMTP_URL: 'smtp://idp:hunter2@mail.example.com' });
    expect(withServer).toMatch(/, mail smtp mail\.example\.com:587 \(STARTTLS required\)$/);
    expect(withServer).not.toContain('hunter2');
    expect(withServer).not.toContain('idp@');
  });

  it('signs messages with IDP_BRAND_NAME and IDP_BRAND_COLOR, else the host of IDP_BASE_URL', () => {
    expect(mailBrandOf(configOf({ IDP_BRAND_NAME: 'Acme', IDP_BRAND_COLOR: '#0b5cad' }))).toStrictEqual({ name: 'Acme', color: '#0b5cad' });
    expect(mailBrandOf(configOf({ IDP_BASE_URL: 'https://id.example.com' }))).toStrictEqual({ name: 'id.example.com', color: undefined });
  });
});
