/**
 * What the running service tells `idp doctor` about itself (GET /config on the management
 * port): the facts of its configuration that the checks judge by, never a secret, a password or
 * a credential of a URL. So the doctor judges the service, not the environment it runs in.
 */
import type { Config } from '../config.ts';
import { describeSmtp } from './mail.ts';
import { describeDatabase, describeRedis } from './startup.ts';

export interface ServiceFacts {
  service: 'idp';
  /** The service's version and the Node.js version it runs on. */
  versions: { service: string; node: string };
  mode: 'production' | 'development';
  base_url: string;
  /** Production on an http base URL: what IDP_ALLOW_HTTP=1 permits. */
  allow_http: boolean;
  /** `where` as the start-up line says it: host, port and database name, or the embedded one's path. */
  database: { kind: 'postgres' | 'embedded'; where: string };
  store: { kind: 'redis' | 'in-process'; where: string };
  /** The mail server (its host, port and TLS; no user, no password), or none. */
  mail: { configured: boolean; server: string | null };
  sign_in_source: Config['signIn']['source'];
  admin_api: Config['adminApi'];
}

export function serviceFacts(config: Config, serviceVersion: string): ServiceFacts {
  return {
    service: 'idp',
    versions: { service: serviceVersion, node: process.version },
    mode: config.production ? 'production' : 'development',
    base_url: config.baseUrl,
    allow_http: config.production && config.baseUrl.startsWith('http:'),
    database: { kind: config.databaseUrl ? 'postgres' : 'embedded', where: describeDatabase(config) },
    store: config.redisUrl ? { kind: 'redis', where: describeRedis(config.redisUrl) } : { kind: 'in-process', where: 'in-process (one instance only)' },
    mail: { configured: config.mail.smtp !== undefined, server: config.mail.smtp ? describeSmtp(config.mail.smtp) : null },
    sign_in_source: config.signIn.source,
    admin_api: config.adminApi,
  };
}

/** A `GET /config` answer as the doctor reads it: the facts, or undefined for anything else. */
export function readServiceFacts(body: unknown): ServiceFacts | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const facts = body as Partial<ServiceFacts>;
  const complete = facts.service === 'idp' && typeof facts.mode === 'string' && typeof facts.base_url === 'string' && typeof facts.allow_http === 'boolean'
    && typeof facts.database?.where === 'string' && typeof facts.store?.where === 'string' && typeof facts.mail?.configured === 'boolean';
  return complete ? (facts as ServiceFacts) : undefined;
}
