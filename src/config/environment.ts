/** Every variable of the environment (the README's Configuration table), each read on its own, and an example of each. */
import { z } from 'zod';
import { mailFrom, smtpUrl } from './mail.ts';
import { masterSecret, previousSecrets } from './secrets.ts';
import { baseUrl, brandColor, brandLogo, brandName, cidrList, decimalIn, durationIn, flag, hostNames, integerIn, nameList, onOff, optionalText, redisUrl, trustProxy, urlWithSchemes } from './values.ts';

/** A good value for each variable, quoted in the one-line error. */
export const EXAMPLES: Record<string, string> = {
  IDP_BASE_URL: 'https://id.example.com',
  PORT: '3000',
  HOST: '0.0.0.0',
  IDP_MANAGEMENT_PORT: '9464',
  IDP_MANAGEMENT_HOST: '127.0.0.1',
  IDP_MANAGEMENT_HOSTS: 'idp.monitoring.svc,metrics.internal.example',
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
  IDP_ADMIN_API_RATE_LIMIT: '1200',
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
  IDP_LOGIN_MAX_FAILURES_PER_ACCOUNT: '20',
  IDP_LOGIN_MAX_ATTEMPTS_PER_INTERACTION: '5',
  LOG_LEVEL: 'info',
  IDP_BRAND_NAME: 'Acme Corporation',
  IDP_BRAND_LOGO: '/etc/idp/logo.svg',
  IDP_BRAND_COLOR: '#0b5cad',
  IDP_PASSWORD_RESET_URL: 'https://password.corp.example/reset',
  IDP_EVENT_RETENTION: '604800',
  IDP_AUDIT_RETENTION: '90d',
  IDP_AUDIT_LOG_EXCLUDE: 'token_issued,sign_in',
  IDP_WEBHOOK_RETRY_SCALE: '1',
  IDP_WEBHOOK_ALLOWED_NETWORKS: '10.20.0.0/16,fd12:3456::/48',
  IDP_SMTP_URL: 'smtp://idp:secret@mail.example.com:587',
  IDP_MAIL_FROM: 'Acme sign-in <no-reply@example.com>',
  IDP_ALLOW_INSECURE_MAIL: '1',
  IDP_ADMIN_API: 'management',
  IDP_ADMIN_CONSOLE: 'off',
  IDP_WEBAUTHN_RP_ID: 'example.com',
};


export const envSchema = z.object({
  IDP_BASE_URL: baseUrl,
  // Their defaults depend on NODE_ENV and on whether they were set: see toConfig.
  PORT: integerIn(0, 65535, undefined),
  HOST: optionalText,
  // Its default depends on NODE_ENV (9464 in production); 0 lets the system choose a free port.
  IDP_MANAGEMENT_PORT: integerIn(0, 65535, undefined),
  IDP_MANAGEMENT_HOST: optionalText.transform((v) => v ?? '127.0.0.1'),
  IDP_MANAGEMENT_HOSTS: hostNames,
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
  IDP_TRUST_PROXY: trustProxy,
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
  IDP_ADMIN_API_RATE_LIMIT: integerIn(1, 10_000_000, 1200),
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
  IDP_LOGIN_MAX_FAILURES_PER_ACCOUNT: integerIn(1, 1_000_000, 20),
  IDP_LOGIN_MAX_ATTEMPTS_PER_INTERACTION: integerIn(1, 1000, 5),
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
  IDP_PASSWORD_RESET_URL: urlWithSchemes(['https:', 'http:']),
  IDP_EVENT_RETENTION: integerIn(3600, 365 * 86400, 7 * 86400),
  // The audit log: how long events are kept (0: none), and the types it never keeps.
  IDP_AUDIT_RETENTION: durationIn(10 * 365 * 86400, 90 * 86400),
  IDP_AUDIT_LOG_EXCLUDE: nameList(['token_issued']),
  // Tests shrink the retry schedule of webhooks (and the 5 days that disable an endpoint) with it.
  IDP_WEBHOOK_RETRY_SCALE: decimalIn(0.00001, 100, 1),
  IDP_WEBHOOK_ALLOWED_NETWORKS: cidrList,
  IDP_SMTP_URL: smtpUrl,
  IDP_MAIL_FROM: mailFrom,
  IDP_ALLOW_INSECURE_MAIL: flag,
  // Where the administration API is served: the public port, the management port only, or nowhere.
  IDP_ADMIN_API: optionalText.transform((v) => v ?? 'public')
    .pipe(z.enum(['public', 'management', 'off'], { message: 'must be public, management or off' })),
  // The administration console, served where the API is: off turns it off alone.
  IDP_ADMIN_CONSOLE: onOff(true),
  IDP_WEBAUTHN_RP_ID: optionalText,
});

export type Env = z.output<typeof envSchema>;

/** A variable that breaks a rule spanning variables, and how. */
export interface Problem {
  variable: string;
  message: string;
}
