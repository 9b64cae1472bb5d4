import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.ts';

const SECRET_HEX = 'a'.repeat(64);

function config(env: Record<string, string>) {
  const result = parseConfig(env);
  if (!result.ok) throw new Error(result.message);
  return result.config;
}

describe('parseConfig', () => {
  it('gives the embedded default with no environment', () => {
    const c = config({});
    expect(c).toMatchObject({
      baseUrl: 'http://localhost:3000', issuer: 'http://localhost:3000/', port: 3000, host: '0.0.0.0',
      databaseUrl: undefined, redisUrl: undefined, dataDir: './.idp-data', secret: undefined, production: false,
      signInSource: 'local', tokenRateLimit: 600, databasePoolSize: 20, loginMaxFailures: 5, loginMaxFailuresPerAddress: 100, logLevel: 'info', trustProxy: false,
    });
    expect(Object.isFrozen(c)).toBe(true);
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

  it.each([
    ['1', 1],
    ['true', true],
    ['10.0.0.0/8,127.0.0.1', '10.0.0.0/8,127.0.0.1'],
  ])('reads IDP_TRUST_PROXY=%s', (value, expected) => {
    expect(config({ IDP_TRUST_PROXY: value }).trustProxy).toStrictEqual(expected);
  });

  it.each([
    [{ PORT: '70000' }, /^configuration error: PORT must be a whole number from 0 to 65535 \(example: PORT=3000\)$/],
    [{ LOG_LEVEL: 'loud' }, /^configuration error: LOG_LEVEL must be one of/],
    [{ IDP_DATABASE_POOL_SIZE: '0' }, /^configuration error: IDP_DATABASE_POOL_SIZE must be a whole number from 1 to 1000 \(example: IDP_DATABASE_POOL_SIZE=20\)$/],
    [{ REDIS_URL: 'http://cache' }, /^configuration error: REDIS_URL must be a URL starting with redis:\/\//],
    [{ IDP_SIGN_IN_SOURCE: 'oidc' }, /IDP_UPSTREAM_ISSUER is required when IDP_SIGN_IN_SOURCE=oidc/],
    [{ IDP_LDAP_USER_FILTER: '(uid=x)' }, /IDP_LDAP_USER_FILTER must contain \{username\}/],
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

  it('never echoes the secret it refuses', () => {
    const result = parseConfig({ IDP_SECRET: 'hunter2-not-long-enough' });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.message).not.toContain('hunter2');
  });
});
