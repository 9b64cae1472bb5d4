/**
 * One zod schema over the environment (the README's Configuration table) -> a frozen Config.
 * Parsing is pure: main.ts hands in the environment and decides what to do with a failure.
 * Each variable is read on its own in config/environment.ts; the rules that span variables and
 * the shape of the Config are here and in config/sign-in.ts.
 */
import { z } from 'zod';
import { envSchema, EXAMPLES, type Env, type Problem } from './config/environment.ts';
import { deploymentProblems, managementPortOf, missingInProduction } from './config/deployment.ts';
import { mailOf, unusedMailSettings } from './config/mail.ts';
import { baseUrlHost } from './config/webauthn.ts';
import { cleartextSource, missingForSource, signInOf, unusedSettings, type SignIn } from './config/sign-in.ts';

/**
 * The whole configuration as one schema: each variable read on its own (envSchema), then the
 * rules that span variables, in the order their errors have always been reported, then the
 * frozen Config. The transform runs only once every variable has been read.
 */
const configSchema = envSchema.transform((env, ctx) => {
  const signIn = checkAcrossVariables(env);
  if (Array.isArray(signIn)) {
    for (const problem of signIn) ctx.addIssue({ code: 'custom', path: [problem.variable], message: problem.message });
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
export type MailConfig = Config['mail'];

/** `warnings`: settings that do nothing in this configuration, one line each. */
export type ConfigResult = { ok: true; config: Config; warnings: string[] } | { ok: false; message: string };

/**
 * Parses the environment. A failure names every variable that is wrong or missing, one line
 * each (the variable, the problem and an example), so that one try shows everything to fix.
 */
export function parseConfig(env: Record<string, string | undefined>): ConfigResult {
  const parsed = configSchema.safeParse(env);
  if (!parsed.success) {
    // A bad value stops zod before the rules across variables: production's and the sign-in
    // source's demands are read from the raw environment as well, so that they are not left for the next try.
    const problems = [
      ...parsed.error.issues.map((issue) => ({ variable: String(issue.path[0] ?? 'environment'), message: issue.message })),
      ...missingInProduction(env),
      ...missingForSource(env),
    ];
    const named = new Set<string>();
    const lines = problems.filter((p) => !named.has(p.variable) && named.add(p.variable)).map((p) => configError(p.variable, p.message));
    return { ok: false, message: lines.join('\n') };
  }
  const warnings = [...unusedSettings(env, parsed.data.signIn.source), ...trustProxyWarnings(parsed.data), ...unusedMailSettings(env, parsed.data.mail.smtp !== undefined)];
  return { ok: true, config: parsed.data, warnings };
}

/** `IDP_TRUST_PROXY=true` works, but lets every client choose the address it is counted under. */
function trustProxyWarnings(config: Config): string[] {
  if (config.trustProxy !== true) return [];
  return ['IDP_TRUST_PROXY=true believes the first X-Forwarded-For address, which any client writes: the per-address limits count the addresses clients choose. '
    + "Set the number of proxies in front (IDP_TRUST_PROXY=1) or the proxy's address instead"];
}

/** The development default of IDP_BASE_URL follows PORT, so the printed links work. */
function baseUrlOf(env: Env): string {
  return env.IDP_BASE_URL ?? `http://localhost:${env.PORT === undefined || env.PORT === 0 ? 3000 : env.PORT}`;
}

/** `configuration error: VARIABLE problem (example: VARIABLE=good value)`. */
function configError(variable: string, message: string): string {
  const example = EXAMPLES[variable];
  return `configuration error: ${variable} ${message}${example ? ` (example: ${variable}=${example})` : ''}`;
}

/** Every rule that spans variables, each broken one named, and the sign-in source when all of them hold. */
function checkAcrossVariables(env: Env): SignIn | Problem[] {
  const signIn = signInOf(env);
  const problems = deploymentProblems(env);
  if (Array.isArray(signIn)) return [...problems, ...signIn];
  const cleartext = cleartextSource(env, signIn);
  if (cleartext) problems.push(cleartext);
  return problems.length > 0 ? problems : signIn;
}

/** The Config the rest of the service reads: named for what it means, frozen, no variable names. */
/** The management port and the names it answers for; none outside production unless IDP_MANAGEMENT_PORT is set. */
function managementOf(env: Env) {
  const port = managementPortOf(env);
  return port === undefined ? undefined : Object.freeze({ port, host: env.IDP_MANAGEMENT_HOST, hosts: Object.freeze(env.IDP_MANAGEMENT_HOSTS) });
}

/**
 * The management port's own origin, from its configuration only (never a request's Host, which a
 * rebinding name could set): `http://{IDP_MANAGEMENT_HOST}:{IDP_MANAGEMENT_PORT}`. The API's
 * server URL and the console's callback there.
 */
export function managementOrigin(management: { host: string; port: number }): string {
  return `http://${management.host.includes(':') ? `[${management.host}]` : management.host}:${management.port}`;
}

/** Where the console lives (its `/admin` is under it): the management origin with IDP_ADMIN_API=management, else the base URL. */
export function consoleBaseUrl(config: { baseUrl: string; adminApi: string; management: { host: string; port: number } | undefined }): string {
  return config.adminApi === 'management' && config.management ? managementOrigin(config.management) : config.baseUrl;
}

function toConfig(env: Env, signIn: SignIn) {
  /** Public base URL without a trailing slash. */
  const baseUrl = baseUrlOf(env);
  return Object.freeze({
    baseUrl,
    /** `{baseUrl}/`: the issuer identifier ends with a slash, and tokens' `iss` must match it exactly (OpenID Connect Discovery 1.0 §4.3). */
    issuer: `${baseUrl}/`,
    port: env.PORT ?? 3000,
    // Outside production the development server (which prints a demo user's password) is
    // reached from this machine only, unless HOST says otherwise; containers set HOST=0.0.0.0.
    host: env.HOST ?? (env.NODE_ENV === 'production' ? '0.0.0.0' : '127.0.0.1'),
    /** Whether HOST, and PORT, were set (idp doctor compares the public URL only with an address it was given). */
    hostSet: env.HOST !== undefined,
    portSet: env.PORT !== undefined,
    /** IDP_MANAGEMENT_PORT: where /metrics, /healthz and /readyz are served apart from the public port. */
    // IDP_MANAGEMENT_HOSTS: the names with dots a request to it may use besides its own address.
    management: managementOf(env),
    /** IDP_ADMIN_API: the administration API on the public port, on the management port only, or off. */
    adminApi: env.IDP_ADMIN_API,
    /** IDP_ADMIN_CONSOLE: the administration console at /admin, wherever the API is served (public or management port). */
    adminConsole: env.IDP_ADMIN_CONSOLE && env.IDP_ADMIN_API !== 'off',
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
    /** Administration API calls per client per minute (IDP_ADMIN_API_RATE_LIMIT). */
    adminApiRateLimit: env.IDP_ADMIN_API_RATE_LIMIT,
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
    /**
     * IDP_PASSWORD_RESET_URL: where the sign-in page's "Forgot password?" leads when the service
     * does not recover passwords itself (a directory or upstream provider, or no mail).
     */
    passwordResetUrl: env.IDP_PASSWORD_RESET_URL,
    /** Events and webhooks: how long events are kept, the factor on retry delays, the networks webhooks may reach. */
    webhooks: Object.freeze({
      eventRetentionSeconds: env.IDP_EVENT_RETENTION,
      retryScale: env.IDP_WEBHOOK_RETRY_SCALE,
      allowedNetworks: Object.freeze(env.IDP_WEBHOOK_ALLOWED_NETWORKS),
    }),
    /** The audit log: how long events are kept (0: none is), and the event types it never keeps. */
    auditLog: Object.freeze({
      retentionSeconds: env.IDP_AUDIT_RETENTION,
      excludedTypes: Object.freeze(env.IDP_AUDIT_LOG_EXCLUDE),
    }),
    /**
     * Passkeys: the relying party id (IDP_WEBAUTHN_RP_ID, else the host of the base URL) and the
     * one origin assertions must come from (the base URL's: never from forwarded headers).
     */
    webauthn: Object.freeze({ rpId: (env.IDP_WEBAUTHN_RP_ID ?? baseUrlHost(baseUrl)).toLowerCase(), origin: new URL(baseUrl).origin }),
    /** What every page shows instead of the default mark: a name, a local logo, a colour. */
    brand: Object.freeze({
      name: env.IDP_BRAND_NAME,
      /** A local image file, served by the service itself (pages load nothing from elsewhere). */
      logo: env.IDP_BRAND_LOGO,
      /** `#rrggbb`, lower case. */
      color: env.IDP_BRAND_COLOR,
    }),
    /** The mail server (IDP_SMTP_URL; undefined: none) and the sender (IDP_MAIL_FROM). */
    mail: mailOf({ smtp: env.IDP_SMTP_URL, from: env.IDP_MAIL_FROM, production: env.NODE_ENV === 'production', allowInsecure: env.IDP_ALLOW_INSECURE_MAIL }, baseUrl),
  });
}

/**
 * The event types IDP_AUDIT_LOG_EXCLUDE names must be some of `known` (the audit events'): a
 * misspelt one would keep what it meant to leave out. Returns the one-line error, or undefined.
 */
export function checkAuditLogExclusions(config: Config, known: readonly string[]): string | undefined {
  const unknown = config.auditLog.excludedTypes.filter((type) => !known.includes(type));
  if (unknown.length === 0) return undefined;
  return configError('IDP_AUDIT_LOG_EXCLUDE', `names ${unknown.length === 1 ? 'an event type that does not exist' : 'event types that do not exist'}: ${unknown.join(', ')}`);
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
