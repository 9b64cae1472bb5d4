/**
 * One zod schema over the environment (CONTRACT section 2) -> a frozen Config.
 * Parsing is pure: main.ts hands in the environment and decides what to do with a failure.
 */
import { z } from 'zod';
import { parseRedisUrl, RedisUrlError } from './store/ephemeral/redis-url.ts';

export type SignInSourceName = 'local' | 'ldap' | 'oidc';

export interface LdapConfig {
  url: string;
  bindDn: string | undefined;
  bindPassword: string | undefined;
  baseDn: string;
  userFilter: string;
  roleAttribute: string;
  /** Upgrade an ldap:// connection with StartTLS before anything is sent. */
  startTls: boolean;
  /** PEM file of the CA that signed the directory's certificate; unset: the system CAs. */
  caFile: string | undefined;
}

export interface UpstreamConfig {
  issuer: string;
  clientId: string;
  clientSecret: string | undefined;
}

export interface Config {
  /** Public base URL without a trailing slash. */
  readonly baseUrl: string;
  /** `{baseUrl}/`: the issuer identifier ends with a slash (interface.md). */
  readonly issuer: string;
  readonly port: number;
  readonly host: string;
  readonly databaseUrl: string | undefined;
  /** Connections each instance keeps to PostgreSQL at most. */
  readonly databasePoolSize: number;
  /**
   * The connection change notifications (clients, users, keys) arrive on: LISTEN needs a session
   * of its own, which a transaction pooler does not keep. IDP_DATABASE_LISTEN_URL, else DATABASE_URL.
   */
  readonly databaseListenUrl: string | undefined;
  /** Whether IDP_DATABASE_LISTEN_URL was set (idp doctor warns behind a pooler when it is not). */
  readonly databaseListenUrlSet: boolean;
  /** Named prepared statements, which PgBouncer before 1.21 cannot carry (IDP_DATABASE_PREPARED_STATEMENTS). */
  readonly databasePreparedStatements: boolean;
  readonly dataDir: string;
  readonly redisUrl: string | undefined;
  /** The master secret; undefined in development means "generate one into dataDir". */
  readonly secret: Buffer | undefined;
  readonly production: boolean;
  readonly trustProxy: boolean | number | string;
  readonly signInSource: SignInSourceName;
  readonly ldap: LdapConfig | undefined;
  readonly upstream: UpstreamConfig | undefined;
  readonly tokenRateLimit: number;
  /** Refresh tokens: idle (sliding) and absolute lifetimes, and the reuse grace window, in seconds. */
  readonly refreshTokenIdleLifetime: number;
  readonly refreshTokenAbsoluteLifetime: number;
  readonly refreshTokenReuseGrace: number;
  /** Automatic key rotation: how long a key signs, and how long its successor is published first (seconds). */
  readonly keyRotationInterval: number;
  readonly keyPublishAhead: number;
  readonly loginMaxFailures: number;
  readonly loginMaxFailuresPerAddress: number;
  readonly logLevel: string;
}

/** A good value for each variable, quoted in the one-line error. */
const EXAMPLES: Record<string, string> = {
  IDP_BASE_URL: 'https://id.example.com',
  PORT: '3000',
  HOST: '0.0.0.0',
  DATABASE_URL: 'postgres://idp:secret@db.internal:5432/idp',
  IDP_DATA_DIR: './.idp-data',
  REDIS_URL: 'redis://cache.internal:6379',
  IDP_SECRET: 'a 43-character base64url value from 32 random bytes, or 64 hex digits',
  NODE_ENV: 'production',
  IDP_ALLOW_HTTP: '1',
  IDP_TRUST_PROXY: '1, true, or 10.0.0.0/8,127.0.0.1',
  IDP_SIGN_IN_SOURCE: 'local',
  IDP_LDAP_URL: 'ldaps://dc1.corp.example:636',
  IDP_LDAP_BIND_DN: 'cn=idp,ou=services,dc=corp,dc=example',
  IDP_LDAP_BASE_DN: 'ou=people,dc=corp,dc=example',
  IDP_LDAP_USER_FILTER: '(|(uid={username})(sAMAccountName={username}))',
  IDP_LDAP_ROLE_ATTRIBUTE: 'memberOf',
  IDP_LDAP_STARTTLS: '1',
  IDP_LDAP_CA_FILE: '/etc/ssl/certs/corp-ca.pem',
  IDP_UPSTREAM_ISSUER: 'https://accounts.example.com/',
  IDP_UPSTREAM_CLIENT_ID: 'idp',
  IDP_TOKEN_RATE_LIMIT: '600',
  IDP_DATABASE_POOL_SIZE: '20',
  IDP_DATABASE_LISTEN_URL: 'postgres://idp:secret@db.internal:5432/idp',
  IDP_DATABASE_PREPARED_STATEMENTS: 'off',
  IDP_REFRESH_TOKEN_IDLE_LIFETIME: '1209600',
  IDP_REFRESH_TOKEN_ABSOLUTE_LIFETIME: '7776000',
  IDP_REFRESH_TOKEN_REUSE_GRACE: '5',
  IDP_KEY_ROTATION_INTERVAL: '7776000',
  IDP_KEY_PUBLISH_AHEAD: '86400',
  IDP_LOGIN_MAX_FAILURES: '5',
  IDP_LOGIN_MAX_FAILURES_PER_ADDRESS: '100',
  LOG_LEVEL: 'info',
};

const optionalText = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));

function integerIn(min: number, max: number, fallback: number) {
  return z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === '') return fallback;
      const n = /^\d+$/.test(v.trim()) ? Number(v.trim()) : Number.NaN;
      if (!Number.isSafeInteger(n) || n < min || n > max) {
        ctx.addIssue({ code: 'custom', message: `must be a whole number from ${min} to ${max}` });
        return z.NEVER;
      }
      return n;
    });
}

const baseUrl = z
  .string()
  .optional()
  .transform((v, ctx) => {
    const raw = v === undefined || v.trim() === '' ? 'http://localhost:3000' : v.trim();
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be an absolute URL' });
      return z.NEVER;
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
      ctx.addIssue({ code: 'custom', message: 'must use http or https' });
      return z.NEVER;
    }
    if (url.search || url.hash || url.username || url.password) {
      ctx.addIssue({ code: 'custom', message: 'must not carry a query, a fragment or credentials' });
      return z.NEVER;
    }
    return url.href.replace(/\/+$/, '');
  });

/** RFC 4648 base64url or hex, at least 32 bytes once decoded. */
const masterSecret = z
  .string()
  .optional()
  .transform((v, ctx) => {
    if (v === undefined || v.trim() === '') return undefined;
    const s = v.trim();
    const bytes = decodeSecret(s);
    if (bytes === undefined || bytes.length < 32) {
      ctx.addIssue({ code: 'custom', message: 'must be at least 32 bytes written as base64url or hex' });
      return z.NEVER;
    }
    return bytes;
  });

function decodeSecret(s: string): Buffer | undefined {
  if (/^(?:[0-9a-fA-F]{2})+$/.test(s)) return Buffer.from(s, 'hex');
  if (/^[A-Za-z0-9_-]+={0,2}$/.test(s)) return Buffer.from(s.replace(/=+$/, ''), 'base64url');
  return undefined;
}

function urlWithSchemes(schemes: string[]) {
  return z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === '') return undefined;
      try {
        const url = new URL(v.trim());
        if (!schemes.includes(url.protocol)) throw new Error('scheme');
        return v.trim();
      } catch {
        ctx.addIssue({ code: 'custom', message: `must be a URL starting with ${schemes.map((s) => `${s}//`).join(' or ')}` });
        return z.NEVER;
      }
    });
}

/** Every form the README documents, read by the parser the store connects with. */
const redisUrl = z
  .string()
  .optional()
  .transform((v, ctx) => {
    if (v === undefined || v.trim() === '') return undefined;
    try {
      parseRedisUrl(v.trim());
      return v.trim();
    } catch (error) {
      const why = error instanceof RedisUrlError ? error.message : 'is not a Redis URL';
      ctx.addIssue({ code: 'custom', message: `must be a URL starting with redis://, rediss://, redis+sentinel:// or redis+cluster:// (${why})` });
      return z.NEVER;
    }
  });

const flag = z
  .string()
  .optional()
  .transform((v, ctx) => {
    if (v === undefined || v === '' || v === '0' || v === 'false') return false;
    if (v === '1' || v === 'true') return true;
    ctx.addIssue({ code: 'custom', message: 'must be 1 or 0' });
    return z.NEVER;
  });

const onOff = (fallback: boolean) => z
  .string()
  .optional()
  .transform((v, ctx) => {
    const value = v?.trim().toLowerCase();
    if (value === undefined || value === '') return fallback;
    if (value === 'on' || value === '1' || value === 'true') return true;
    if (value === 'off' || value === '0' || value === 'false') return false;
    ctx.addIssue({ code: 'custom', message: 'must be on or off' });
    return z.NEVER;
  });

const envSchema = z.object({
  IDP_BASE_URL: baseUrl,
  PORT: integerIn(0, 65535, 3000),
  HOST: optionalText.transform((v) => v ?? '0.0.0.0'),
  DATABASE_URL: urlWithSchemes(['postgres:', 'postgresql:']),
  IDP_DATA_DIR: optionalText.transform((v) => v ?? './.idp-data'),
  REDIS_URL: redisUrl,
  IDP_SECRET: masterSecret,
  NODE_ENV: optionalText,
  IDP_ALLOW_HTTP: flag,
  IDP_TRUST_PROXY: optionalText.transform((v): boolean | number | string => {
    if (v === undefined || v === 'false') return false;
    if (v === 'true') return true;
    return /^\d+$/.test(v) ? Number(v) : v;
  }),
  IDP_SIGN_IN_SOURCE: z
    .string()
    .optional()
    .transform((v) => (v === undefined || v === '' ? 'local' : v))
    .pipe(z.enum(['local', 'ldap', 'oidc'], { message: 'must be local, ldap or oidc' })),
  IDP_LDAP_URL: urlWithSchemes(['ldap:', 'ldaps:']),
  IDP_LDAP_BIND_DN: optionalText,
  IDP_LDAP_BIND_PASSWORD: z.string().optional(),
  IDP_LDAP_BASE_DN: optionalText,
  IDP_LDAP_USER_FILTER: optionalText
    .transform((v) => v ?? '(|(uid={username})(sAMAccountName={username}))')
    .refine((v) => v.includes('{username}'), { message: 'must contain {username}' }),
  IDP_LDAP_ROLE_ATTRIBUTE: optionalText.transform((v) => v ?? 'memberOf'),
  IDP_LDAP_STARTTLS: flag,
  IDP_LDAP_CA_FILE: optionalText,
  IDP_UPSTREAM_ISSUER: urlWithSchemes(['https:', 'http:']),
  IDP_UPSTREAM_CLIENT_ID: optionalText,
  IDP_UPSTREAM_CLIENT_SECRET: z.string().optional(),
  IDP_TOKEN_RATE_LIMIT: integerIn(1, 10_000_000, 600),
  IDP_DATABASE_POOL_SIZE: integerIn(1, 1000, 20),
  IDP_DATABASE_LISTEN_URL: urlWithSchemes(['postgres:', 'postgresql:']),
  IDP_DATABASE_PREPARED_STATEMENTS: onOff(true),
  IDP_REFRESH_TOKEN_IDLE_LIFETIME: integerIn(60, 10 * 365 * 86400, 14 * 86400),
  IDP_REFRESH_TOKEN_ABSOLUTE_LIFETIME: integerIn(60, 10 * 365 * 86400, 90 * 86400),
  IDP_REFRESH_TOKEN_REUSE_GRACE: integerIn(0, 300, 5),
  IDP_KEY_ROTATION_INTERVAL: integerIn(3600, 10 * 365 * 86400, 90 * 86400),
  IDP_KEY_PUBLISH_AHEAD: integerIn(60, 365 * 86400, 86400),
  IDP_LOGIN_MAX_FAILURES: integerIn(1, 1000, 5),
  IDP_LOGIN_MAX_FAILURES_PER_ADDRESS: integerIn(1, 1_000_000, 100),
  LOG_LEVEL: z
    .string()
    .optional()
    .transform((v) => (v === undefined || v === '' ? 'info' : v))
    .pipe(z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
      message: 'must be one of fatal, error, warn, info, debug, trace, silent',
    })),
});

type Env = z.output<typeof envSchema>;

export type ConfigResult = { ok: true; config: Config } | { ok: false; message: string };

/** Parses the environment; a failure is one line naming the variable, the problem and an example. */
export function parseConfig(env: Record<string, string | undefined>): ConfigResult {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const variable = String(issue?.path[0] ?? 'environment');
    return { ok: false, message: configError(variable, issue?.message ?? 'is invalid') };
  }
  const problem = crossCheck(parsed.data);
  if (problem) return { ok: false, message: configError(problem.variable, problem.message) };
  return { ok: true, config: toConfig(parsed.data) };
}

function configError(variable: string, message: string): string {
  const example = EXAMPLES[variable];
  return `configuration error: ${variable} ${message}${example ? ` (example: ${variable}=${example})` : ''}`;
}

/** Rules that span variables: production demands, and what each sign-in source needs. */
function crossCheck(env: Env): { variable: string; message: string } | undefined {
  if (env.NODE_ENV === 'production') {
    if (!env.IDP_SECRET) return { variable: 'IDP_SECRET', message: 'is required when NODE_ENV=production (generated secrets are for development only)' };
    if (!env.DATABASE_URL) return { variable: 'DATABASE_URL', message: 'is required when NODE_ENV=production (the embedded database is for development only)' };
    if (!env.REDIS_URL) return { variable: 'REDIS_URL', message: 'is required when NODE_ENV=production (the in-process store serves one instance only)' };
    if (env.IDP_BASE_URL.startsWith('http:') && !env.IDP_ALLOW_HTTP) {
      return { variable: 'IDP_BASE_URL', message: 'must use https when NODE_ENV=production (set IDP_ALLOW_HTTP=1 to allow http)' };
    }
  }
  if (env.IDP_DATABASE_LISTEN_URL && !env.DATABASE_URL) {
    return { variable: 'IDP_DATABASE_LISTEN_URL', message: 'needs DATABASE_URL (the embedded database has no separate listen connection)' };
  }
  if (env.IDP_REFRESH_TOKEN_IDLE_LIFETIME > env.IDP_REFRESH_TOKEN_ABSOLUTE_LIFETIME) {
    return { variable: 'IDP_REFRESH_TOKEN_IDLE_LIFETIME', message: 'must not exceed IDP_REFRESH_TOKEN_ABSOLUTE_LIFETIME' };
  }
  if (env.IDP_KEY_PUBLISH_AHEAD >= env.IDP_KEY_ROTATION_INTERVAL) {
    return { variable: 'IDP_KEY_PUBLISH_AHEAD', message: 'must be shorter than IDP_KEY_ROTATION_INTERVAL' };
  }
  if (env.IDP_SIGN_IN_SOURCE === 'ldap') {
    if (!env.IDP_LDAP_URL) return { variable: 'IDP_LDAP_URL', message: 'is required when IDP_SIGN_IN_SOURCE=ldap' };
    if (!env.IDP_LDAP_BASE_DN) return { variable: 'IDP_LDAP_BASE_DN', message: 'is required when IDP_SIGN_IN_SOURCE=ldap' };
  }
  if (env.IDP_SIGN_IN_SOURCE === 'oidc') {
    if (!env.IDP_UPSTREAM_ISSUER) return { variable: 'IDP_UPSTREAM_ISSUER', message: 'is required when IDP_SIGN_IN_SOURCE=oidc' };
    if (!env.IDP_UPSTREAM_CLIENT_ID) return { variable: 'IDP_UPSTREAM_CLIENT_ID', message: 'is required when IDP_SIGN_IN_SOURCE=oidc' };
  }
  return undefined;
}

function toConfig(env: Env): Config {
  return Object.freeze({
    baseUrl: env.IDP_BASE_URL,
    issuer: `${env.IDP_BASE_URL}/`,
    port: env.PORT,
    host: env.HOST,
    databaseUrl: env.DATABASE_URL,
    databasePoolSize: env.IDP_DATABASE_POOL_SIZE,
    databaseListenUrl: env.IDP_DATABASE_LISTEN_URL ?? env.DATABASE_URL,
    databaseListenUrlSet: env.IDP_DATABASE_LISTEN_URL !== undefined,
    databasePreparedStatements: env.IDP_DATABASE_PREPARED_STATEMENTS,
    dataDir: env.IDP_DATA_DIR,
    redisUrl: env.REDIS_URL,
    secret: env.IDP_SECRET,
    production: env.NODE_ENV === 'production',
    trustProxy: env.IDP_TRUST_PROXY,
    signInSource: env.IDP_SIGN_IN_SOURCE,
    ldap: env.IDP_LDAP_URL && env.IDP_LDAP_BASE_DN
      ? {
          url: env.IDP_LDAP_URL,
          bindDn: env.IDP_LDAP_BIND_DN,
          bindPassword: env.IDP_LDAP_BIND_PASSWORD,
          baseDn: env.IDP_LDAP_BASE_DN,
          userFilter: env.IDP_LDAP_USER_FILTER,
          roleAttribute: env.IDP_LDAP_ROLE_ATTRIBUTE,
          startTls: env.IDP_LDAP_STARTTLS,
          caFile: env.IDP_LDAP_CA_FILE,
        }
      : undefined,
    upstream: env.IDP_UPSTREAM_ISSUER && env.IDP_UPSTREAM_CLIENT_ID
      ? { issuer: env.IDP_UPSTREAM_ISSUER, clientId: env.IDP_UPSTREAM_CLIENT_ID, clientSecret: env.IDP_UPSTREAM_CLIENT_SECRET }
      : undefined,
    tokenRateLimit: env.IDP_TOKEN_RATE_LIMIT,
    refreshTokenIdleLifetime: env.IDP_REFRESH_TOKEN_IDLE_LIFETIME,
    refreshTokenAbsoluteLifetime: env.IDP_REFRESH_TOKEN_ABSOLUTE_LIFETIME,
    refreshTokenReuseGrace: env.IDP_REFRESH_TOKEN_REUSE_GRACE,
    keyRotationInterval: env.IDP_KEY_ROTATION_INTERVAL,
    keyPublishAhead: env.IDP_KEY_PUBLISH_AHEAD,
    loginMaxFailures: env.IDP_LOGIN_MAX_FAILURES,
    loginMaxFailuresPerAddress: env.IDP_LOGIN_MAX_FAILURES_PER_ADDRESS,
    logLevel: env.LOG_LEVEL,
  });
}
