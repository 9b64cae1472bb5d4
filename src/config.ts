/**
 * One zod schema over the environment (the README's Configuration table) -> a frozen Config.
 * Parsing is pure: main.ts hands in the environment and decides what to do with a failure.
 * Each variable is read on its own in config/environment.ts; the rules that span variables and
 * the shape of the Config are here and in config/sign-in.ts.
 */
import { z } from 'zod';
import { envSchema, EXAMPLES, type Env, type Problem } from './config/environment.ts';
import { cleartextSource, signInOf, unusedSettings, type SignIn } from './config/sign-in.ts';

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

/** The development default of IDP_BASE_URL follows PORT, so the printed links work. */
function baseUrlOf(env: Env): string {
  return env.IDP_BASE_URL ?? `http://localhost:${env.PORT === 0 ? 3000 : env.PORT}`;
}

/** `configuration error: VARIABLE problem (example: VARIABLE=good value)`. */
function configError(variable: string, message: string): string {
  const example = EXAMPLES[variable];
  return `configuration error: ${variable} ${message}${example ? ` (example: ${variable}=${example})` : ''}`;
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

/** The Config the rest of the service reads: named for what it means, frozen, no variable names. */
function toConfig(env: Env, signIn: SignIn) {
  /** Public base URL without a trailing slash. */
  const baseUrl = baseUrlOf(env);
  return Object.freeze({
    baseUrl,
    /** `{baseUrl}/`: the issuer identifier ends with a slash, and tokens' `iss` must match it exactly (OpenID Connect Discovery 1.0 §4.3). */
    issuer: `${baseUrl}/`,
    port: env.PORT,
    host: env.HOST,
    /** IDP_MANAGEMENT_PORT: where /metrics, /healthz and /readyz are served apart from the public port. */
    // 0 stands for unset: the management port has no default.
    // IDP_MANAGEMENT_HOSTS: the names with dots a request to it may use besides its own address.
    management: env.IDP_MANAGEMENT_PORT === 0
      ? undefined
      : Object.freeze({ port: env.IDP_MANAGEMENT_PORT, host: env.IDP_MANAGEMENT_HOST, hosts: Object.freeze(env.IDP_MANAGEMENT_HOSTS) }),
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
    /** Failed sign-ins per account from unrecognised devices over every address, per 15 minutes. */
    loginMaxFailuresPerAccount: env.IDP_LOGIN_MAX_FAILURES_PER_ACCOUNT,
    /** Passwords one interaction (one sign-in page and its CSRF token) may try. */
    loginMaxAttemptsPerInteraction: env.IDP_LOGIN_MAX_ATTEMPTS_PER_INTERACTION,
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
