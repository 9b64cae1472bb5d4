/** The start-up line: where the service runs and on what, from the configuration. */
import type { Config } from '../config.ts';
import { parseRedisUrl } from '../store/ephemeral/redis-url.ts';
import { describeSmtp } from './mail.ts';

/** What the start-up line says: where it runs and on what, never a password. */
export interface StartupSummary {
  mode: 'production' | 'development';
  issuer: string;
  database: string;
  store: string;
  signInSource: Config['signIn']['source'];
  listening: string;
  /** Where mail goes: the mail server, the log, or nowhere (and what is not offered then). */
  mail: string;
}

/** `port`: the one bound (PORT=0 lets the system choose). */
export function describeStartup(config: Config, port = config.port): StartupSummary {
  return {
    mode: config.production ? 'production' : 'development',
    issuer: config.issuer,
    database: describeDatabase(config),
    store: config.redisUrl ? describeRedis(config.redisUrl) : 'in-process (one instance only)',
    signInSource: config.signIn.source,
    listening: `${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}${config.hostSet || config.production ? '' : LOOPBACK_DEFAULT_NOTE}`,
    mail: describeMail(config),
  };
}

function describeMail(config: Config): string {
  if (config.mail.smtp) return describeSmtp(config.mail.smtp);
  if (!config.production) return 'to the log (IDP_SMTP_URL unset)';
  return 'off (IDP_SMTP_URL unset: password recovery by mail, email verification and mail notices are not offered)';
}

/** Said when the development default (loopback) is in force, so that nobody wonders why another machine gets no answer. */
const LOOPBACK_DEFAULT_NOTE = ' (this machine only; HOST=0.0.0.0 listens on every interface)';

/** The summary as one line of text: `started: mode development, issuer …`. */
export function startupLine(summary: StartupSummary): string {
  return `started: mode ${summary.mode}, issuer ${summary.issuer}, database ${summary.database}, store ${summary.store}, `
    + `sign-in source ${summary.signInSource}, listening ${summary.listening}, mail ${summary.mail}`;
}

/** The database as `host:port/name` or the embedded one's path; the URL's credentials are left out. */
export function describeDatabase(config: Config): string {
  if (!config.databaseUrl) return `embedded ${config.dataDir.replace(/\/+$/, '')}/db`;
  const url = new URL(config.databaseUrl);
  return `postgres ${hostOf(config.databaseUrl)}${url.pathname.length > 1 ? url.pathname : ''}`;
}

/** The store as `redis host:port`, or the kind and nodes of a Sentinel or Cluster URL; no password. */
export function describeRedis(urlText: string): string {
  const target = parseRedisUrl(urlText);
  if (target.kind === 'single') return `redis ${hostOf(urlText)}`;
  const nodes = target.nodes.map((n) => `${n.host}:${n.port}`).join(',');
  return target.kind === 'sentinel' ? `redis sentinel ${nodes} master ${target.master}` : `redis cluster ${nodes}`;
}

function hostOf(urlText: string): string {
  const url = new URL(urlText);
  return url.host || 'localhost';
}
