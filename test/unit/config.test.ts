import { describe, expect, it } from 'vitest';
import { checkAuditLogExclusions, checkConfigFiles, parseConfig } from '../../src/config.ts';
import { AUDIT_EVENT_TYPES } from '../../src/events/audit-events.ts';

const SECRET_HEX = 'a'.repeat(64);

function config(env: Record<string, string>) {
  const result = parseConfig(env);
  if (!result.ok) throw new Error(result.message);
  return result.config;
}

describe('parseConfig', () => {
  it('listens on every interface by default in production only (HOST still decides)', () => {
    const production = { NODE_ENV: 'production', IDP_SECRET: 'a'.repeat(64), DATABASE_URL: 'postgres://db/idp', REDIS_URL: 'redis://cache', IDP_BASE_URL: 'https://id.example.com' };
    expect([config({}).host, config(production).host, config({ HOST: '0.0.0.0' }).host, config({ ...production, HOST: '10.0.0.5' }).host])
      .toStrictEqual(['127.0.0.1', '0.0.0.0', '0.0.0.0', '10.0.0.5']);
  });

  it('gives the embedded default with no environment', () => {
    const c = config({});
    expect(c).toMatchObject({
      baseUrl: 'http://localhost:3000', issuer: 'http://localhost:3000/', port: 3000, host: '127.0.0.1',
      databaseUrl: undefined, redisUrl: undefined, dataDir: './.idp-data', secret: undefined, production: false,
      signIn: { source: 'local' }, tokenRateLimit: 600, authorizeRateLimit: 300, databasePoolSize: 20, loginMaxFailures: 5, loginMaxFailuresPerAddress: 100, loginMaxFailuresPerAccount: 20, loginMaxAttemptsPerInteraction: 5, logLevel: 'info', trustProxy: false,
    });
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('keeps audit events 90 days but token_issued by default; a duration with a unit or in seconds, 0 none; an empty exclusion list none', () => {
    expect(config({}).auditLog).toStrictEqual({ retentionSeconds: 90 * 86400, excludedTypes: ['token_issued'] });
    expect(config({ IDP_AUDIT_RETENTION: '30d', IDP_AUDIT_LOG_EXCLUDE: '' }).auditLog).toStrictEqual({ retentionSeconds: 30 * 86400, excludedTypes: [] });
    expect(config({ IDP_AUDIT_RETENTION: '0', IDP_AUDIT_LOG_EXCLUDE: ' sign_in , logout ' }).auditLog).toStrictEqual({ retentionSeconds: 0, excludedTypes: ['sign_in', 'logout'] });
    expect(config({ IDP_AUDIT_RETENTION: '3600' }).auditLog.retentionSeconds).toBe(3600);
    for (const wrong of ['90 days', '-1', '1w', '99999d']) {
      const result = parseConfig({ IDP_AUDIT_RETENTION: wrong });
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.message).toMatch(/^configuration error: IDP_AUDIT_RETENTION must be a duration/);
    }
    expect(checkAuditLogExclusions(config({}), AUDIT_EVENT_TYPES)).toBeUndefined();
    expect(checkAuditLogExclusions(config({ IDP_AUDIT_LOG_EXCLUDE: 'token_issued,sign_ins' }), AUDIT_EVENT_TYPES))
      .toBe('configuration error: IDP_AUDIT_LOG_EXCLUDE names an event type that does not exist: sign_ins (example: IDP_AUDIT_LOG_EXCLUDE=token_issued,sign_in)');
  });

  it('keeps a path in the base URL and gives the issuer one trailing slash', () => {
    expect(config({ IDP_BASE_URL: 'https://example.com/idp/' })).toMatchObject({ baseUrl: 'https://example.com/idp', issuer: 'https://example.com/idp/' });
  });

  it('decodes the master secret from hex or base64url, at least 32 bytes', () => {
    expect(config({ IDP_SECRET: SECRET_HEX }).secret?.equals(Buffer.alloc(32, 0xaa))).toBe(true);
    const b64 = Buffer.alloc(32, 7).toString('base64url');
    expect(config({ IDP_SECRET: b64 }).secret?.equals(Buffer.alloc(32, 7))).toBe(true);
    const short = parseConfig({ IDP_SECRET: Buffer.alloc(31, 7).toString('base64url') });
    expect(short.ok).toBe(false);
  });

  it('reads standard base64, base64url and hex as the same bytes, and IDP_SECRET_PREVIOUS as a list', () => {
    const bytes = Buffer.alloc(32, 0xfb);
    for (const text of [bytes.toString('base64'), bytes.toString('base64').replace(/=+$/, ''), bytes.toString('base64url'), bytes.toString('hex')]) {
      expect(config({ IDP_SECRET: text }).secret?.equals(bytes), text).toBe(true);
    }
    const previous = config({ IDP_SECRET: SECRET_HEX, IDP_SECRET_PREVIOUS: ` ${bytes.toString('base64')} , ${'bb'.repeat(32)}` }).previousSecrets;
    expect(previous.map((b) => b.toString('hex'))).toStrictEqual([bytes.toString('hex'), 'bb'.repeat(32)]);
    expect(config({}).previousSecrets).toStrictEqual([]);
  });

  it('makes the development base URL follow PORT', () => {
    expect(config({ PORT: '3927' })).toMatchObject({ baseUrl: 'http://localhost:3927', issuer: 'http://localhost:3927/' });
    expect(config({ PORT: '3927', IDP_BASE_URL: 'https://id.example.com' }).baseUrl).toBe('https://id.example.com');
  });

  it('warns of the variables of a sign-in source not in force', () => {
    const result = parseConfig({ IDP_LDAP_URL: 'ldap://dir', IDP_LDAP_BASE_DN: 'dc=x', IDP_UPSTREAM_CLIENT_ID: 'idp' });
    expect(result.ok && result.warnings).toStrictEqual([
      'IDP_LDAP_BASE_DN, IDP_LDAP_URL are set but IDP_SIGN_IN_SOURCE=local: they do nothing unless IDP_SIGN_IN_SOURCE=ldap',
      'IDP_UPSTREAM_CLIENT_ID is set but IDP_SIGN_IN_SOURCE=local: it does nothing unless IDP_SIGN_IN_SOURCE=oidc',
    ]);
    const ldap = parseConfig({ IDP_SIGN_IN_SOURCE: 'ldap', IDP_LDAP_URL: 'ldap://dir', IDP_LDAP_BASE_DN: 'dc=x' });
    expect(ldap.ok && ldap.warnings).toStrictEqual([]);
  });

  it.each([
    ['1', 1],
    ['true', true],
    ['10.0.0.0/8,127.0.0.1', '10.0.0.0/8,127.0.0.1'],
    ['loopback, fd00::/8', 'loopback, fd00::/8'],
  ])('reads IDP_TRUST_PROXY=%s', (value, expected) => {
    expect(config({ IDP_TRUST_PROXY: value }).trustProxy).toStrictEqual(expected);
  });

  it.each([
    [{ PORT: '70000' }, /^configuration error: PORT must be a whole number from 0 to 65535 \(example: PORT=3000\)$/],
    [{ LOG_LEVEL: 'loud' }, /^configuration error: LOG_LEVEL must be one of/],
    [{ IDP_DATABASE_POOL_SIZE: '0' }, /^configuration error: IDP_DATABASE_POOL_SIZE must be a whole number from 1 to 1000 \(example: IDP_DATABASE_POOL_SIZE=20\)$/],
    [{ IDP_AUTHORIZE_RATE_LIMIT: '0' }, /^configuration error: IDP_AUTHORIZE_RATE_LIMIT must be a whole number from 1 to 10000000 \(example: IDP_AUTHORIZE_RATE_LIMIT=300\)$/],
    [{ REDIS_URL: 'http://cache' }, /^configuration error: REDIS_URL must be a URL starting with redis:\/\//],
    [{ IDP_SIGN_IN_SOURCE: 'oidc', IDP_UPSTREAM_CLIENT_ID: 'idp' }, /IDP_UPSTREAM_ISSUER is required when IDP_SIGN_IN_SOURCE=oidc/],
    [{ IDP_LDAP_USER_FILTER: '(uid=x)' }, /IDP_LDAP_USER_FILTER must contain \{username\}/],
    [{ NODE_ENV: 'prod' }, /^configuration error: NODE_ENV must be production, development or test, or unset/],
    [{ IDP_TRUST_PROXY: 'yes' }, /^configuration error: IDP_TRUST_PROXY must be .*\("yes" is none of these\)/],
    [{ IDP_TRUST_PROXY: '10.0.0.0/33' }, /IDP_TRUST_PROXY/],
    [{ IDP_SECRET: Buffer.alloc(20).toString('base64') }, /^configuration error: IDP_SECRET must be at least 32 random bytes, but decodes to 20 \(example: IDP_SECRET=\$\(openssl rand -base64 32\)\)$/],
    [{ IDP_SECRET: 'a'.repeat(64), IDP_SECRET_PREVIOUS: `${'b'.repeat(64)},short` }, /^configuration error: IDP_SECRET_PREVIOUS \(entry 2\) must be at least 32/],
    [{ NODE_ENV: 'production', IDP_SECRET: 'a'.repeat(64), DATABASE_URL: 'postgres://db/idp', REDIS_URL: 'redis://cache' }, /IDP_BASE_URL is required when NODE_ENV=production/],
  ])('refuses %j with one line', (env, message) => {
    const result = parseConfig(env);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.message).toMatch(message);
      expect(result.message).not.toContain('\n');
    }
  });

  it('accepts production with every demand met, and http only with IDP_ALLOW_HTTP=1', () => {
    const env = { NODE_ENV: 'production', IDP_SECRET: SECRET_HEX, DATABASE_URL: 'postgres://db/idp', REDIS_URL: 'redis://cache:6379' };
    expect(parseConfig({ ...env, IDP_BASE_URL: 'https://id.example.com' }).ok).toBe(true);
    expect(parseConfig({ ...env, IDP_BASE_URL: 'http://id.example.com' }).ok).toBe(false);
    expect(config({ ...env, IDP_BASE_URL: 'http://id.example.com', IDP_ALLOW_HTTP: '1' }).production).toBe(true);
  });

  describe('production refuses a sign-in source reached in cleartext', () => {
    const production = { NODE_ENV: 'production', IDP_SECRET: SECRET_HEX, DATABASE_URL: 'postgres://db/idp', REDIS_URL: 'redis://cache:6379', IDP_BASE_URL: 'https://id.example.com' };
    const oidc = { ...production, IDP_SIGN_IN_SOURCE: 'oidc', IDP_UPSTREAM_CLIENT_ID: 'idp' };
    const ldap = { ...production, IDP_SIGN_IN_SOURCE: 'ldap', IDP_LDAP_BASE_DN: 'dc=corp' };

    it.each([
      ['an http upstream on another host', { ...oidc, IDP_UPSTREAM_ISSUER: 'http://accounts.example.com/' }, 'IDP_UPSTREAM_ISSUER'],
      ['an http upstream on an address that only starts like loopback', { ...oidc, IDP_UPSTREAM_ISSUER: 'http://127.0.0.1.evil.example/' }, 'IDP_UPSTREAM_ISSUER'],
      ['ldap:// without StartTLS', { ...ldap, IDP_LDAP_URL: 'ldap://dc1.corp.example' }, 'IDP_LDAP_URL'],
    ])('refuses %s, naming the variable and the way out', (_name, env, variable) => {
      const result = parseConfig(env);
      expect(result.ok).toBe(false);
      if (!result.ok) {
        expect(result.message).toMatch(new RegExp(`^configuration error: ${variable} `));
        expect(result.message).toContain('IDP_ALLOW_INSECURE_SOURCE=1');
        expect(result.message).not.toContain('\n');
      }
    });

    it.each([
      ['an https upstream', { ...oidc, IDP_UPSTREAM_ISSUER: 'https://accounts.example.com/' }],
      ['an http upstream on localhost', { ...oidc, IDP_UPSTREAM_ISSUER: 'http://localhost:8080/' }],
      ['an http upstream on 127.0.0.0/8', { ...oidc, IDP_UPSTREAM_ISSUER: 'http://127.1.2.3:8080/' }],
      ['an http upstream on ::1', { ...oidc, IDP_UPSTREAM_ISSUER: 'http://[::1]:8080/' }],
      ['ldaps://', { ...ldap, IDP_LDAP_URL: 'ldaps://dc1.corp.example' }],
      ['ldap:// with StartTLS', { ...ldap, IDP_LDAP_URL: 'ldap://dc1.corp.example', IDP_LDAP_STARTTLS: '1' }],
      ['an http upstream the operator allowed', { ...oidc, IDP_UPSTREAM_ISSUER: 'http://accounts.example.com/', IDP_ALLOW_INSECURE_SOURCE: '1' }],
      ['ldap:// the operator allowed', { ...ldap, IDP_LDAP_URL: 'ldap://dc1.corp.example', IDP_ALLOW_INSECURE_SOURCE: '1' }],
      ['an unused ldap:// URL with the local source', { ...production, IDP_LDAP_URL: 'ldap://dc1.corp.example' }],
    ])('accepts %s', (_name, env) => {
      expect(config(env).production).toBe(true);
    });

    it('leaves development alone', () => {
      expect(config({ IDP_SIGN_IN_SOURCE: 'ldap', IDP_LDAP_BASE_DN: 'dc=corp', IDP_LDAP_URL: 'ldap://dc1.corp.example' }).production).toBe(false);
    });
  });

  it('listens for changes on IDP_DATABASE_LISTEN_URL, else DATABASE_URL, and turns prepared statements off with off', () => {
    const pooled = { DATABASE_URL: 'postgres://idp@pgbouncer:6432/idp' };
    expect(config(pooled)).toMatchObject({ databaseListenUrl: pooled.DATABASE_URL, databaseListenUrlSet: false, databasePreparedStatements: true });
    expect(config({ ...pooled, IDP_DATABASE_LISTEN_URL: 'postgres://idp@db:5432/idp', IDP_DATABASE_PREPARED_STATEMENTS: 'off' }))
      .toMatchObject({ databaseListenUrl: 'postgres://idp@db:5432/idp', databaseListenUrlSet: true, databasePreparedStatements: false });
    expect(parseConfig({ ...pooled, IDP_DATABASE_PREPARED_STATEMENTS: 'maybe' })).toStrictEqual({
      ok: false, message: 'configuration error: IDP_DATABASE_PREPARED_STATEMENTS must be on or off (example: IDP_DATABASE_PREPARED_STATEMENTS=off)',
    });
    expect(parseConfig({ IDP_DATABASE_LISTEN_URL: 'postgres://idp@db:5432/idp' })).toMatchObject({ ok: false, message: expect.stringMatching(/^configuration error: IDP_DATABASE_LISTEN_URL needs DATABASE_URL/) });
  });

  it('has a management port in production (9464 unless IDP_MANAGEMENT_PORT says otherwise, 0 a free one), none by default elsewhere', () => {
    const production = { NODE_ENV: 'production', IDP_SECRET: 'e'.repeat(64), DATABASE_URL: 'postgres://db/idp', REDIS_URL: 'redis://cache:6379', IDP_BASE_URL: 'https://id.example.com' };
    expect(config(production).management).toStrictEqual({ port: 9464, host: '127.0.0.1', hosts: [] });
    expect(config({ ...production, IDP_MANAGEMENT_PORT: '9100' }).management?.port).toBe(9100);
    expect(config({ ...production, IDP_MANAGEMENT_PORT: '0' }).management?.port).toBe(0);
    expect(config({ ...production, IDP_ADMIN_API: 'management' }).adminApi).toBe('management');
    expect(config({}).management).toBeUndefined();
    expect(config({ IDP_MANAGEMENT_PORT: '9464' }).management?.port).toBe(9464);
  });

  it('serves the administration API on the public port by default, on the management port (which it needs), or not at all', () => {
    expect(config({}).adminApi).toBe('public');
    expect(config({ IDP_ADMIN_API: 'off' }).adminApi).toBe('off');
    expect(config({ IDP_ADMIN_API: 'management', IDP_MANAGEMENT_PORT: '9464' }).adminApi).toBe('management');
    expect(parseConfig({ IDP_ADMIN_API: 'management' })).toStrictEqual({
      ok: false, message: 'configuration error: IDP_ADMIN_API management needs IDP_MANAGEMENT_PORT (the port the administration API is then served on) (example: IDP_ADMIN_API=management)',
    });
    expect(parseConfig({ IDP_ADMIN_API: 'private' })).toStrictEqual({
      ok: false, message: 'configuration error: IDP_ADMIN_API must be public, management or off (example: IDP_ADMIN_API=management)',
    });
  });

  it('serves the administration console where the API is, unless IDP_ADMIN_CONSOLE=off', () => {
    expect(config({}).adminConsole).toBe(true);
    expect(config({ IDP_ADMIN_CONSOLE: 'off' }).adminConsole).toBe(false);
    expect(config({ IDP_ADMIN_API: 'off' }).adminConsole).toBe(false);
    expect(parseConfig({ IDP_ADMIN_CONSOLE: 'maybe' })).toStrictEqual({
      ok: false, message: 'configuration error: IDP_ADMIN_CONSOLE must be on or off (example: IDP_ADMIN_CONSOLE=off)',
    });
  });

  it('never echoes the secret it refuses', () => {
    const result = parseConfig({ IDP_SECRET: 'hunter2-not-long-enough' });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.message).not.toContain('hunter2');
  });

  it('reads the brand: a name, a logo by image type, a #rgb or #rrggbb colour', () => {
    expect(config({}).brand).toEqual({ name: undefined, logo: undefined, color: undefined });
    const c = config({ IDP_BRAND_NAME: ' Acme & Co ', IDP_BRAND_LOGO: '/etc/idp/Logo.SVG', IDP_BRAND_COLOR: '#0B5' });
    expect(c.brand).toEqual({ name: 'Acme & Co', logo: { path: '/etc/idp/Logo.SVG', contentType: 'image/svg+xml' }, color: '#00bb55' });
    expect(config({ IDP_BRAND_LOGO: 'logo.png' }).brand.logo?.contentType).toBe('image/png');
    expect(config({ IDP_BRAND_LOGO: 'logo.jpeg' }).brand.logo?.contentType).toBe('image/jpeg');
    expect(config({ IDP_BRAND_LOGO: 'logo.webp' }).brand.logo?.contentType).toBe('image/webp');
    expect(config({ IDP_BRAND_COLOR: '#0b5cad' }).brand.color).toBe('#0b5cad');
  });

  it.each([
    ['IDP_BRAND_COLOR', 'red'],
    ['IDP_BRAND_COLOR', '#12345'],
    ['IDP_BRAND_COLOR', '#0b5cad; background: url(x)'],
    ['IDP_BRAND_LOGO', '/etc/idp/logo.gif'],
    ['IDP_BRAND_LOGO', '/etc/idp/logo.html'],
    ['IDP_BRAND_NAME', 'x'.repeat(61)],
    ['IDP_BRAND_NAME', 'Acme\u0007'],
  ])('refuses %s=%s in one line with an example', (variable, value) => {
    const result = parseConfig({ [variable]: value });
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.message).toMatch(new RegExp(`^configuration error: ${variable} .*\\(example: ${variable}=`));
      expect(result.message.split('\n')).toHaveLength(1);
    }
  });

  it('names a logo file that is not there', () => {
    const c = config({ IDP_BRAND_LOGO: '/nonexistent/logo.png' });
    expect(checkConfigFiles(c, () => false)).toBe('configuration error: IDP_BRAND_LOGO /nonexistent/logo.png is not a readable file (example: IDP_BRAND_LOGO=/etc/idp/logo.svg)');
    expect(checkConfigFiles(c, () => true)).toBeUndefined();
    expect(checkConfigFiles(config({}), () => false)).toBeUndefined();
  });
});
