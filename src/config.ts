/**
 * One zod schema over the environment (CONTRACT section 2) -> a frozen Config.
 * Parsing is pure: main.ts hands in the environment and decides what to do with a failure.
 */
import { isIP } from 'node:net';
import { z } from 'zod';
import { parseRedisUrl, RedisUrlError } from './store/ephemeral/redis-url.ts';

/** A good value for each variable, quoted in the one-line error. */
const EXAMPLES: Record<string, string> = {
  IDP_BASE_URL: 'https://id.example.com',
  PORT: '3000',
  HOST: '0.0.0.0',
  IDP_MANAGEMENT_PORT: '9464',
  IDP_MANAGEMENT_HOST: '127.0.0.1',
  OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel-collector:4318',
  DATABASE_URL: 'postgres://idp:secret@db.internal:5432/idp',
  IDP_DATA_DIR: './.idp-data',
  REDIS_URL: 'redis://cache.internal:6379',
  // A command that makes a good one, as a shell would run it.
  IDP_SECRET: '$(openssl rand -base64 32)',
  IDP_SECRET_PREVIOUS: '$OLD_SECRET,$OLDER_SECRET',
  NODE_ENV: 'production',
  IDP_ALLOW_HTTP: '1',
  IDP_ALLOW_INSECURE_SOURCE: '1',
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
  IDP_AUTHORIZE_RATE_LIMIT: '300',
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
  IDP_BRAND_NAME: 'Acme Corporation',
  IDP_BRAND_LOGO: '/etc/idp/logo.svg',
  IDP_BRAND_COLOR: '#0b5cad',
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
    if (v === undefined || v.trim() === '') return undefined;
    const raw = v.trim();
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

const MASTER_SECRET_BYTES = 32;

/** Hex, or RFC 4648 base64 (standard or URL-safe alphabet, padded or not), at least 32 bytes once decoded. */
const masterSecret = z
  .string()
  .optional()
  .transform((v, ctx) => {
    if (v === undefined || v.trim() === '') return undefined;
    const read = readSecret(v.trim());
    if ('problem' in read) {
      ctx.addIssue({ code: 'custom', message: read.problem });
      return z.NEVER;
    }
    return read.bytes;
  });

/** IDP_SECRET_PREVIOUS: comma-separated secrets, each as IDP_SECRET. */
const previousSecrets = z
  .string()
  .optional()
  .transform((v, ctx) => {
    const entries = (v ?? '').split(',').map((e) => e.trim()).filter((e) => e !== '');
    const secrets: Buffer[] = [];
    for (const [i, entry] of entries.entries()) {
      const read = readSecret(entry);
      if ('problem' in read) {
        ctx.addIssue({ code: 'custom', message: `${entries.length > 1 ? `(entry ${i + 1}) ` : ''}${read.problem}` });
        return z.NEVER;
      }
      secrets.push(read.bytes);
    }
    return secrets;
  });

/** The decoded secret, or what is wrong with it (never the value itself: it is a secret). */
function readSecret(text: string): { bytes: Buffer } | { problem: string } {
  const bytes = decodeSecret(text);
  if (bytes === undefined) return { problem: 'must be written as base64, base64url or hex' };
  if (bytes.length < MASTER_SECRET_BYTES) return { problem: `must be at least ${MASTER_SECRET_BYTES} random bytes, but decodes to ${bytes.length}` };
  return { bytes };
}

function decodeSecret(s: string): Buffer | undefined {
  if (/^(?:[0-9a-fA-F]{2})+$/.test(s)) return Buffer.from(s, 'hex');
  // Either alphabet, not both: `+/` is standard base64 (RFC 4648 §4), `-_` base64url (§5).
  if (/^[A-Za-z0-9+/]+={0,2}$/.test(s)) return Buffer.from(s, 'base64');
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

/** An address, a CIDR range, or a name the proxy-addr module knows (loopback, linklocal, uniquelocal). */
function isProxyAddress(text: string): boolean {
  if (['loopback', 'linklocal', 'uniquelocal'].includes(text)) return true;
  const [address = '', bits, extra] = text.split('/');
  const family = isIP(address);
  if (family === 0 || extra !== undefined) return false;
  if (bits === undefined) return true;
  return /^\d+$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
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

/** The image types a logo may be, by file extension, and the Content-Type each is served with. */
const LOGO_TYPES: Record<string, string> = {
  png: 'image/png',
  svg: 'image/svg+xml',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
};

const brandLogo = optionalText.transform((v, ctx) => {
  if (v === undefined) return undefined;
  const contentType = LOGO_TYPES[/\.([a-z]+)$/i.exec(v)?.[1]?.toLowerCase() ?? ''];
  if (!contentType) {
    ctx.addIssue({ code: 'custom', message: 'must be the path of a .png, .svg, .jpg or .webp file' });
    return z.NEVER;
  }
  return { path: v, contentType };
});

/** `#rgb` or `#rrggbb`, kept as `#rrggbb` so the contrast can be computed from it. */
const brandColor = optionalText.transform((v, ctx) => {
  if (v === undefined) return undefined;
  const hex = /^#([0-9a-f]{3}|[0-9a-f]{6})$/i.exec(v)?.[1]?.toLowerCase();
  if (!hex) {
    ctx.addIssue({ code: 'custom', message: 'must be a colour written #rgb or #rrggbb' });
    return z.NEVER;
  }
  return `#${hex.length === 3 ? [...hex].map((c) => c + c).join('') : hex}`;
});

const brandName = optionalText.refine((v) => v === undefined || (v.length <= 60 && !/\p{Cc}/u.test(v)), {
  message: 'must be at most 60 characters, without control characters',
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
  IDP_MANAGEMENT_PORT: integerIn(1, 65535, 0),
  IDP_MANAGEMENT_HOST: optionalText.transform((v) => v ?? '127.0.0.1'),
  OTEL_EXPORTER_OTLP_ENDPOINT: urlWithSchemes(['http:', 'https:']),
  DATABASE_URL: urlWithSchemes(['postgres:', 'postgresql:']),
  IDP_DATA_DIR: optionalText.transform((v) => v ?? './.idp-data'),
  REDIS_URL: redisUrl,
  IDP_SECRET: masterSecret,
  IDP_SECRET_PREVIOUS: previousSecrets,
  // A typo (`prod`) must not quietly run development mode.
  NODE_ENV: optionalText.pipe(z.enum(['production', 'development', 'test'], { message: 'must be production, development or test, or unset' }).optional()),
  IDP_ALLOW_HTTP: flag,
  IDP_ALLOW_INSECURE_SOURCE: flag,
  IDP_TRUST_PROXY: optionalText.transform((v, ctx): boolean | number | string => {
    if (v === undefined || v === 'false') return false;
    if (v === 'true') return true;
    if (/^\d+$/.test(v)) return Number(v);
    const wrong = v.split(',').map((a) => a.trim()).find((a) => !isProxyAddress(a));
    if (wrong !== undefined) {
      ctx.addIssue({ code: 'custom', message: `must be true, false, a number of proxies, or addresses and CIDR ranges separated by commas ("${wrong}" is none of these)` });
      return z.NEVER;
    }
    return v;
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
  IDP_AUTHORIZE_RATE_LIMIT: integerIn(1, 10_000_000, 300),
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
  IDP_BRAND_NAME: brandName,
  IDP_BRAND_LOGO: brandLogo,
  IDP_BRAND_COLOR: brandColor,
});

type Env = z.output<typeof envSchema>;

/**
 * The whole configuration as one schema: each variable read on its own (envSchema), then the
 * rules that span variables, in the order their errors have always been reported, then the
 * frozen Config. The transform runs only once every variable has been read.
 */
const configSchema = envSchema.transform((env, ctx) => {
  const signIn = checkAcrossVariables(env);
  if ('variable' in signIn) {
    ctx.addIssue({ code: 'custom', path: [signIn.variable], message: signIn.message });
    return z.NEVER;
  }
  return toConfig(env, signIn);
});

/** The configuration, as the schema makes it: frozen, the sign-in source with what it needs. */
export type Config = z.output<typeof configSchema>;
export type SignInConfig = Config['signIn'];
export type SignInSourceName = SignInConfig['source'];
export type LdapConfig = Extract<SignInConfig, { source: 'ldap' }>['ldap'];
export type UpstreamConfig = Extract<SignInConfig, { source: 'oidc' }>['upstream'];
export type BrandConfig = Config['brand'];

/** `warnings`: settings that do nothing in this configuration, one line each. */
export type ConfigResult = { ok: true; config: Config; warnings: string[] } | { ok: false; message: string };

/** Parses the environment; a failure is one line naming the variable, the problem and an example. */
export function parseConfig(env: Record<string, string | undefined>): ConfigResult {
  const parsed = configSchema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const variable = String(issue?.path[0] ?? 'environment');
    return { ok: false, message: configError(variable, issue?.message ?? 'is invalid') };
  }
  return { ok: true, config: parsed.data, warnings: unusedSettings(env, parsed.data.signIn.source) };
}

const SOURCE_VARIABLES: Record<SignInSourceName, RegExp | undefined> = {
  local: undefined,
  ldap: /^IDP_LDAP_/,
  oidc: /^IDP_UPSTREAM_/,
};

/** Variables of another sign-in source than the one in force: set by mistake, or a source forgotten. */
function unusedSettings(env: Record<string, string | undefined>, source: SignInSourceName): string[] {
  const warnings: string[] = [];
  for (const [other, pattern] of Object.entries(SOURCE_VARIABLES)) {
    if (other === source || !pattern) continue;
    const set = Object.keys(env).filter((name) => pattern.test(name) && (env[name] ?? '').trim() !== '').sort();
    if (set.length > 0) warnings.push(`${set.join(', ')} ${set.length === 1 ? 'is' : 'are'} set but IDP_SIGN_IN_SOURCE=${source}: ${set.length === 1 ? 'it does' : 'they do'} nothing unless IDP_SIGN_IN_SOURCE=${other}`);
  }
  return warnings;
}

/** The development default of IDP_BASE_URL follows PORT, so the printed links work. */
function baseUrlOf(env: Env): string {
  return env.IDP_BASE_URL ?? `http://localhost:${env.PORT === 0 ? 3000 : env.PORT}`;
}

/** What the start-up line says: where it runs and on what, never a password. */
export interface StartupSummary {
  mode: 'production' | 'development';
  issuer: string;
  database: string;
  store: string;
  signInSource: SignInSourceName;
  listening: string;
}

/** `port`: the one bound (PORT=0 lets the system choose). */
export function describeStartup(config: Config, port = config.port): StartupSummary {
  return {
    mode: config.production ? 'production' : 'development',
    issuer: config.issuer,
    database: describeDatabase(config),
    store: config.redisUrl ? describeRedis(config.redisUrl) : 'in-process (one instance only)',
    signInSource: config.signIn.source,
    listening: `${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`,
  };
}

/** The summary as one line of text: `started: mode development, issuer …`. */
export function startupLine(summary: StartupSummary): string {
  return `started: mode ${summary.mode}, issuer ${summary.issuer}, database ${summary.database}, store ${summary.store}, `
    + `sign-in source ${summary.signInSource}, listening ${summary.listening}`;
}

/** The database as `host:port/name` or the embedded one's path; the URL's credentials are left out. */
export function describeDatabase(config: Config): string {
  if (!config.databaseUrl) return `embedded ${config.dataDir.replace(/\/+$/, '')}/db`;
  const url = new URL(config.databaseUrl);
  return `postgres ${hostOf(config.databaseUrl)}${url.pathname.length > 1 ? url.pathname : ''}`;
}

/** The store as `redis host:port`, or the kind and nodes of a Sentinel or Cluster URL; no password. */
function describeRedis(urlText: string): string {
  const target = parseRedisUrl(urlText);
  if (target.kind === 'single') return `redis ${hostOf(urlText)}`;
  const nodes = target.nodes.map((n) => `${n.host}:${n.port}`).join(',');
  return target.kind === 'sentinel' ? `redis sentinel ${nodes} master ${target.master}` : `redis cluster ${nodes}`;
}

function hostOf(urlText: string): string {
  const url = new URL(urlText);
  return url.host || 'localhost';
}

function configError(variable: string, message: string): string {
  const example = EXAMPLES[variable];
  return `configuration error: ${variable} ${message}${example ? ` (example: ${variable}=${example})` : ''}`;
}

/** A variable that breaks a rule spanning variables, and how. */
interface Problem {
  variable: string;
  message: string;
}

/**
 * Every rule that spans variables, first problem first (the order errors have always been
 * reported in), and the sign-in source when all of them hold.
 */
function checkAcrossVariables(env: Env): SignIn | Problem {
  const signIn = signInOf(env);
  const problem = deploymentProblem(env) ?? ('variable' in signIn ? signIn : cleartextSource(env, signIn));
  return problem ?? signIn;
}

/** Production's demands, then settings that must agree with each other. */
function deploymentProblem(env: Env): Problem | undefined {
  if (env.NODE_ENV === 'production') {
    if (!env.IDP_SECRET) return { variable: 'IDP_SECRET', message: 'is required when NODE_ENV=production (generated secrets are for development only)' };
    if (!env.DATABASE_URL) return { variable: 'DATABASE_URL', message: 'is required when NODE_ENV=production (the embedded database is for development only)' };
    if (!env.REDIS_URL) return { variable: 'REDIS_URL', message: 'is required when NODE_ENV=production (the in-process store serves one instance only)' };
    if (!env.IDP_BASE_URL) return { variable: 'IDP_BASE_URL', message: 'is required when NODE_ENV=production (the https URL clients and browsers use)' };
    if (env.IDP_BASE_URL.startsWith('http:') && !env.IDP_ALLOW_HTTP) {
      return { variable: 'IDP_BASE_URL', message: 'must use https when NODE_ENV=production (set IDP_ALLOW_HTTP=1 to allow http)' };
    }
  }
  if (env.IDP_SECRET_PREVIOUS.length > 0 && !env.IDP_SECRET) {
    return { variable: 'IDP_SECRET', message: 'is required when IDP_SECRET_PREVIOUS is set (the current secret, which seals everything new)' };
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
  return undefined;
}

/** The deployment's one sign-in source, with everything it needs (IDP_SIGN_IN_SOURCE). */
type SignIn =
  | { readonly source: 'local' }
  | { readonly source: 'ldap'; readonly ldap: ReturnType<typeof ldapOf> }
  | { readonly source: 'oidc'; readonly upstream: ReturnType<typeof upstreamOf> };

/** The sign-in source in force, or the first variable it needs that is unset. */
function signInOf(env: Env): SignIn | Problem {
  if (env.IDP_SIGN_IN_SOURCE === 'ldap') {
    if (!env.IDP_LDAP_URL) return { variable: 'IDP_LDAP_URL', message: 'is required when IDP_SIGN_IN_SOURCE=ldap' };
    if (!env.IDP_LDAP_BASE_DN) return { variable: 'IDP_LDAP_BASE_DN', message: 'is required when IDP_SIGN_IN_SOURCE=ldap' };
    return Object.freeze({ source: 'ldap', ldap: ldapOf(env, env.IDP_LDAP_URL, env.IDP_LDAP_BASE_DN) });
  }
  if (env.IDP_SIGN_IN_SOURCE === 'oidc') {
    if (!env.IDP_UPSTREAM_ISSUER) return { variable: 'IDP_UPSTREAM_ISSUER', message: 'is required when IDP_SIGN_IN_SOURCE=oidc' };
    if (!env.IDP_UPSTREAM_CLIENT_ID) return { variable: 'IDP_UPSTREAM_CLIENT_ID', message: 'is required when IDP_SIGN_IN_SOURCE=oidc' };
    return Object.freeze({ source: 'oidc', upstream: upstreamOf(env, env.IDP_UPSTREAM_ISSUER, env.IDP_UPSTREAM_CLIENT_ID) });
  }
  return Object.freeze({ source: 'local' });
}

function ldapOf(env: Env, url: string, baseDn: string) {
  return Object.freeze({
    url,
    bindDn: env.IDP_LDAP_BIND_DN,
    bindPassword: env.IDP_LDAP_BIND_PASSWORD,
    baseDn,
    userFilter: env.IDP_LDAP_USER_FILTER,
    roleAttribute: env.IDP_LDAP_ROLE_ATTRIBUTE,
    /** Upgrade an ldap:// connection with StartTLS before anything is sent. */
    startTls: env.IDP_LDAP_STARTTLS,
    /** PEM file of the CA that signed the directory's certificate; unset: the system CAs. */
    caFile: env.IDP_LDAP_CA_FILE,
  });
}

function upstreamOf(env: Env, issuer: string, clientId: string) {
  return Object.freeze({ issuer, clientId, clientSecret: env.IDP_UPSTREAM_CLIENT_SECRET });
}

const INSECURE_SOURCE_HINT = 'when NODE_ENV=production (set IDP_ALLOW_INSECURE_SOURCE=1 to allow it)';

/**
 * In production the passwords typed in (LDAP bind) and the upstream's tokens must not cross the
 * network in cleartext: an http upstream is allowed on loopback only, ldap:// only with StartTLS.
 */
function cleartextSource(env: Env, signIn: SignIn): Problem | undefined {
  if (env.NODE_ENV !== 'production' || env.IDP_ALLOW_INSECURE_SOURCE) return undefined;
  if (signIn.source === 'oidc') {
    const upstream = new URL(signIn.upstream.issuer);
    if (upstream.protocol === 'http:' && !isLoopbackHost(upstream.hostname)) {
      return { variable: 'IDP_UPSTREAM_ISSUER', message: `must use https (or http on a loopback address) ${INSECURE_SOURCE_HINT}` };
    }
  }
  if (signIn.source === 'ldap' && signIn.ldap.url.toLowerCase().startsWith('ldap:') && !signIn.ldap.startTls) {
    return { variable: 'IDP_LDAP_URL', message: `must use ldaps:// or IDP_LDAP_STARTTLS=1 ${INSECURE_SOURCE_HINT}` };
  }
  return undefined;
}

/** localhost, 127.0.0.0/8 or ::1, as URL.hostname writes them. */
function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase();
  return host === 'localhost' || host === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

function toConfig(env: Env, signIn: SignIn) {
  /** Public base URL without a trailing slash. */
  const baseUrl = baseUrlOf(env);
  return Object.freeze({
    baseUrl,
    /** `{baseUrl}/`: the issuer identifier ends with a slash (interface.md). */
    issuer: `${baseUrl}/`,
    port: env.PORT,
    host: env.HOST,
    /** IDP_MANAGEMENT_PORT: where /metrics, /healthz and /readyz are served apart from the public port. */
    // 0 stands for unset: the management port has no default.
    management: env.IDP_MANAGEMENT_PORT === 0 ? undefined : Object.freeze({ port: env.IDP_MANAGEMENT_PORT, host: env.IDP_MANAGEMENT_HOST }),
    /** OTEL_EXPORTER_OTLP_ENDPOINT: traces are exported there (OTLP/HTTP) when set. */
    otlpEndpoint: env.OTEL_EXPORTER_OTLP_ENDPOINT,
    databaseUrl: env.DATABASE_URL,
    /** Connections each instance keeps to PostgreSQL at most. */
    databasePoolSize: env.IDP_DATABASE_POOL_SIZE,
    /**
     * The connection change notifications (clients, users, keys) arrive on: LISTEN needs a session
     * of its own, which a transaction pooler does not keep. IDP_DATABASE_LISTEN_URL, else DATABASE_URL.
     */
    databaseListenUrl: env.IDP_DATABASE_LISTEN_URL ?? env.DATABASE_URL,
    /** Whether IDP_DATABASE_LISTEN_URL was set (idp doctor warns behind a pooler when it is not). */
    databaseListenUrlSet: env.IDP_DATABASE_LISTEN_URL !== undefined,
    /** Named prepared statements, which PgBouncer before 1.21 cannot carry (IDP_DATABASE_PREPARED_STATEMENTS). */
    databasePreparedStatements: env.IDP_DATABASE_PREPARED_STATEMENTS,
    dataDir: env.IDP_DATA_DIR,
    redisUrl: env.REDIS_URL,
    /** The master secret; undefined in development means "generate one into dataDir". */
    secret: env.IDP_SECRET,
    /** Older master secrets (IDP_SECRET_PREVIOUS): they open what they sealed; nothing new is sealed under them. */
    previousSecrets: Object.freeze(env.IDP_SECRET_PREVIOUS),
    production: env.NODE_ENV === 'production',
    trustProxy: env.IDP_TRUST_PROXY,
    signIn,
    tokenRateLimit: env.IDP_TOKEN_RATE_LIMIT,
    /** Authorization requests per minute from one source address. */
    authorizeRateLimit: env.IDP_AUTHORIZE_RATE_LIMIT,
    /** Refresh tokens: idle (sliding) and absolute lifetimes, and the reuse grace window, in seconds. */
    refreshTokenIdleLifetime: env.IDP_REFRESH_TOKEN_IDLE_LIFETIME,
    refreshTokenAbsoluteLifetime: env.IDP_REFRESH_TOKEN_ABSOLUTE_LIFETIME,
    refreshTokenReuseGrace: env.IDP_REFRESH_TOKEN_REUSE_GRACE,
    /** Automatic key rotation: how long a key signs, and how long its successor is published first (seconds). */
    keyRotationInterval: env.IDP_KEY_ROTATION_INTERVAL,
    keyPublishAhead: env.IDP_KEY_PUBLISH_AHEAD,
    loginMaxFailures: env.IDP_LOGIN_MAX_FAILURES,
    loginMaxFailuresPerAddress: env.IDP_LOGIN_MAX_FAILURES_PER_ADDRESS,
    logLevel: env.LOG_LEVEL,
    /** What every page shows instead of the default mark: a name, a local logo, a colour. */
    brand: Object.freeze({
      name: env.IDP_BRAND_NAME,
      /** A local image file, served by the service itself (pages load nothing from elsewhere). */
      logo: env.IDP_BRAND_LOGO,
      /** `#rrggbb`, lower case. */
      color: env.IDP_BRAND_COLOR,
    }),
  });
}

/**
 * What parsing cannot see: files the configuration names must be there when the service starts.
 * Returns the one-line error, or undefined when all is well.
 */
export function checkConfigFiles(config: Config, isReadableFile: (path: string) => boolean): string | undefined {
  if (config.brand.logo && !isReadableFile(config.brand.logo.path)) {
    return configError('IDP_BRAND_LOGO', `${config.brand.logo.path} is not a readable file`);
  }
  return undefined;
}
