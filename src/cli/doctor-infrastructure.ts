/**
 * The checks `idp doctor` makes from the service's own side: proxy headers, clock drift, the
 * database, the shared store and the directory or upstream provider.
 */
import type { Config, SignInConfig } from '../config.ts';
import { createLdapSource } from '../sources/ldap.ts';
import { createUpstreamSource } from '../sources/upstream-oidc.ts';
import { createRedisEphemeralStore, describeRedisTarget, parseRedisUrl } from '../store/ephemeral/redis.ts';
import type { UserRepository } from '../store/types.ts';
import { describeDatabase, describeRedis } from '../config/startup.ts';
import { describeError, fail, get, isOutcome, ok, openOrSkip, skip, warn, type DoctorContext, type Outcome } from './doctor-context.ts';
import { notTheService, serviceFactsOf } from './doctor-service.ts';

/** Tokens carry whole seconds and relying parties allow a little skew; beyond this, tokens go wrong. */
const MAX_DRIFT_MS = 5000;

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);
const WILDCARD = new Set(['0.0.0.0', '::']);

/**
 * The rule, kept simple: the service learns the client's address and scheme from the connection
 * unless IDP_TRUST_PROXY names the proxy. When the public URL is not the listening address
 * (HOST:PORT) itself, something forwards the traffic; without IDP_TRUST_PROXY every request then
 * seems to come from that proxy, and per-address sign-in throttling and rate limits count all
 * users as one. An https public URL in front of an http IDP_BASE_URL means TLS ends at a proxy the
 * configuration does not know of: issuer, Secure cookies and HSTS are all wrong.
 */
export async function checkForwarded(context: DoctorContext): Promise<Outcome> {
  const { config } = context;
  const url = new URL(context.url);
  if (url.protocol === 'https:' && config.baseUrl.startsWith('http:')) {
    return fail(`${context.url} is https but IDP_BASE_URL is ${config.baseUrl}`, 'set IDP_BASE_URL to the https public URL (TLS ends at the proxy)');
  }
  const answer = await context.discovery();
  if (!answer.ok && !answer.answered) return skip(`nothing to judge: ${context.url} does not answer (see the discovery check)`);
  if (config.trustProxy === true) {
    return warn(
      `${url.host} answers; IDP_TRUST_PROXY=true believes the first X-Forwarded-For address, which any client writes: the per-address limits count the addresses clients choose`,
      "set IDP_TRUST_PROXY to the number of proxies in front (e.g. IDP_TRUST_PROXY=1) or the proxy's address",
    );
  }
  const listening = `${config.host}:${config.port} (HOST:PORT${config.hostSet || config.portSet ? '' : ', the defaults: both unset here'})`;
  // What is judged below is measured first: something must answer at the listening address as
  // this environment has it, or it is not the service's (the defaults when the variables are unset).
  const direct = await answersAt(context, config);
  if (direct !== true) {
    return skip(`${url.host} answers, but nothing answers at ${listening} (${direct}): whether a proxy is in between cannot be told; run idp doctor with the service's HOST and PORT`);
  }
  if (reachesListener(url, config)) return ok(`${url.host} is the listening address ${listening}: no proxy in between`);
  if (config.trustProxy === false) {
    return fail(
      `${url.host} is not the listening address ${listening}, so a proxy forwards, but IDP_TRUST_PROXY is unset: every request seems to come from the proxy`,
      "set IDP_TRUST_PROXY to the proxy's address or hop count (e.g. IDP_TRUST_PROXY=1)",
    );
  }
  return ok(`${url.host} is not the listening address ${listening}: a proxy forwards, and IDP_TRUST_PROXY=${String(config.trustProxy)} trusts its X-Forwarded-* headers`);
}

/** true when anything answers HTTP at the listening address, else why not. */
async function answersAt(context: DoctorContext, config: Config): Promise<true | string> {
  const host = WILDCARD.has(config.host) ? '127.0.0.1' : config.host;
  try {
    await get(context, `http://${host.includes(':') ? `[${host}]` : host}:${config.port}/healthz`);
    return true;
  } catch (error) {
    return describeError(error);
  }
}

function reachesListener(url: URL, config: Config): boolean {
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  if (port !== config.port) return false;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return WILDCARD.has(config.host) || host === config.host || (LOOPBACK.has(host) && LOOPBACK.has(config.host));
}

/** This machine's clock against the database server's; the middle of the round trip is "now". */
export async function checkClock(context: DoctorContext): Promise<Outcome> {
  const durable = await openOrSkip(context);
  if (isOutcome(durable)) return durable;
  const before = context.clock();
  const server = (await durable.serverTime()).getTime();
  const drift = (before + context.clock()) / 2 - server;
  const seconds = (Math.abs(drift) / 1000).toFixed(1);
  if (Math.abs(drift) > MAX_DRIFT_MS) {
    return fail(`this machine's clock is ${seconds} s ${drift > 0 ? 'ahead of' : 'behind'} the database server's (more than ${MAX_DRIFT_MS / 1000} s)`, 'sync the clocks (NTP)');
  }
  return ok(`within ${seconds} s of the database server's clock`);
}

export async function checkDatabase(context: DoctorContext): Promise<Outcome> {
  const where = databaseName(context.config);
  try {
    const started = performance.now();
    await (await context.durable()).ping();
    const facts = await serviceFactsOf(context);
    const here = describeDatabase(context.config);
    if (facts && facts.database.where !== here) return notTheService('database', here, facts.database.where, 'DATABASE_URL');
    return ok(`${where} answers (${Math.round(performance.now() - started)} ms)`);
  } catch (error) {
    const fix = context.config.databaseUrl ? 'check DATABASE_URL, and that PostgreSQL runs and accepts this machine' : `check IDP_DATA_DIR (${context.config.dataDir})`;
    return fail(`${where} does not answer: ${describeError(error)}`, fix);
  }
}

/** How long the change feed may take to prove itself (its probe waits 2 s at most). */
const FEED_WAIT_MS = 3000;

/** PgBouncer's default port, and the names poolers go by. */
const POOLER_PORTS = new Set(['6432']);
const POOLER_NAMES = /pgbouncer|pooler|pgcat|odyssey|supavisor|pgpool/i;

/**
 * The database's change notifications (SQL edits of clients and users, key rotations) reach
 * this instance: the probe the store sends through a data connection came back on the listen
 * connection. Behind a transaction pooler it does not, unless IDP_DATABASE_LISTEN_URL points
 * past the pooler; a DATABASE_URL that looks like a pooler with no listen URL is warned about
 * even when the probe got through (a session-mode pool today may be a transaction-mode one tomorrow).
 */
export async function checkChangeFeed(context: DoctorContext): Promise<Outcome> {
  const { config } = context;
  if (!config.databaseUrl) return ok('embedded database: notifications stay in the process');
  const durable = await openOrSkip(context);
  if (isOutcome(durable)) return durable;
  const deadline = context.clock() + FEED_WAIT_MS;
  while (durable.changeFeed() !== 'listening' && context.clock() < deadline) await new Promise((r) => setTimeout(r, 50));
  const listenWhere = config.databaseListenUrl ? databaseName({ ...config, databaseUrl: config.databaseListenUrl }) : databaseName(config);
  const fix = 'set IDP_DATABASE_LISTEN_URL to a direct connection to PostgreSQL (LISTEN needs a session of its own, which a transaction pooler does not keep)';
  if (durable.changeFeed() !== 'listening') {
    return fail(`change notifications do not arrive on ${listenWhere}: SQL edits of clients and users and key rotations would go unnoticed`, fix);
  }
  if (!config.databaseListenUrlSet && looksLikePooler(config.databaseUrl)) {
    return warn(`DATABASE_URL looks like a connection pooler (${databaseName(config)}) and IDP_DATABASE_LISTEN_URL is unset; notifications arrive now`, fix);
  }
  return ok(`change notifications arrive on ${listenWhere}`);
}

function looksLikePooler(databaseUrl: string): boolean {
  const url = new URL(databaseUrl);
  return POOLER_PORTS.has(url.port) || POOLER_NAMES.test(url.hostname) || url.searchParams.has('pgbouncer');
}

/** Where the database is, without its credentials. */
function databaseName(config: Config): string {
  if (!config.databaseUrl) return `embedded database in ${config.dataDir}`;
  const url = new URL(config.databaseUrl);
  return `PostgreSQL at ${url.hostname}:${url.port || '5432'}${url.pathname}`;
}

export async function checkStore(context: DoctorContext): Promise<Outcome> {
  const { redisUrl } = context.config;
  const facts = await serviceFactsOf(context);
  const here = redisUrl ? describeRedis(redisUrl) : 'in-process (one instance only)';
  if (facts && facts.store.where !== here) return notTheService('store', here, facts.store.where, 'REDIS_URL');
  if (!redisUrl) return ok('in-process store (single instance)');
  const where = describeRedisTarget(parseRedisUrl(redisUrl));
  const store = createRedisEphemeralStore({ url: redisUrl });
  try {
    await store.ping();
    return ok(`${where} answers`);
  } catch (error) {
    return fail(`${where} does not answer: ${describeError(error)}`, 'check REDIS_URL, and that Redis runs and accepts this machine');
  } finally {
    await store.close().catch(() => {});
  }
}

/** The directory or the upstream provider, built as the service builds it (src/composition/services.ts). */
export async function checkSignInSource(context: DoctorContext): Promise<Outcome> {
  const { signIn } = context.config;
  if (signIn.source === 'local') return skip('local accounts: nothing outside to reach');
  const durable = await openOrSkip(context);
  if (isOutcome(durable)) return durable;
  const source = outsideSource(signIn, context.config.baseUrl, durable.users);
  try {
    await source.ping();
    return ok(`${source.what} answers`);
  } catch (error) {
    return fail(`${source.what} does not answer: ${describeError(error)}`, source.fix);
  }
}

interface OutsideSource {
  what: string;
  fix: string;
  ping(): Promise<void>;
}

function outsideSource(signIn: Exclude<SignInConfig, { source: 'local' }>, baseUrl: string, users: UserRepository): OutsideSource {
  if (signIn.source === 'ldap') {
    return {
      what: `directory ${signIn.ldap.url}`,
      fix: 'check IDP_LDAP_URL, IDP_LDAP_BIND_DN, IDP_LDAP_BIND_PASSWORD and IDP_LDAP_BASE_DN, and that the directory accepts this machine',
      ping: async () => {
        await createLdapSource(signIn.ldap, users).ping();
      },
    };
  }
  return {
    what: `upstream provider ${signIn.upstream.issuer}`,
    fix: 'check IDP_UPSTREAM_ISSUER, and that this machine reaches its discovery document',
    ping: async () => {
      await createUpstreamSource(signIn.upstream, users, `${baseUrl}/signin/oidc/callback`).ping();
    },
  };
}
