/**
 * Opens what the service runs on, from the configuration: the durable store (PostgreSQL or the
 * embedded PGlite), the ephemeral store (Redis or in-process), the clients cache and the keys.
 * Shared by `idp serve` and the command line.
 */
import type { Logger } from 'pino';
import { systemClock, type Clock } from '../clock.ts';
import { consoleBaseUrl, type Config } from '../config.ts';
import { describeDatabase } from '../config/startup.ts';
import { embeddedDatabaseHolder, embeddedDatabasePath, embeddedSocketPath, ensureDataDir } from '../data-dir.ts';
import { createMailer, mailBrandOf } from '../mail/setup.ts';
import { createAccountServices, type AccountServices } from './account.ts';
import { deriveServices } from './security.ts';
import type { ServicesBase } from './base.ts';
import { createProtocolServices, type ProtocolServices } from './protocol.ts';
import { createWebhookServices, type WebhookServices } from './webhooks.ts';
import { createSessionStore } from '../sessions/browser-session.ts';
import { createInteractionStore } from '../sessions/sign-in/interaction.ts';
import { createLdapSource } from '../sources/ldap.ts';
import { createLocalSource } from '../sources/local.ts';
import { createUpstreamSource } from '../sources/upstream-oidc.ts';
import type { SignInSource } from '../sources/types.ts';
import { createClientsCache } from '../store/clients-cache.ts';
import { withConsoleClient } from '../console/built-in-client.ts';
import { createCachedUsers, factorsForgettingUsers } from '../store/users-cache.ts';
import { createMemoryEphemeralStore } from '../store/ephemeral/memory.ts';
import { createRedisEphemeralStore } from '../store/ephemeral/redis.ts';
import { openDurableStore, openSharedDurableStore } from '../store/sql/durable.ts';
import { auditsType } from '../events/audit-policy.ts';
import type { DurableStore } from '../store/types.ts';
import { createKeyManager, type KeyManager } from '../tokens/keys.ts';
import { createRevocationList } from '../tokens/revocation-list.ts';
import { deriveKeyring, type MasterSecrets } from '../tokens/secret-box.ts';

/** What the service runs on: the stores, the keys, the source and what derives from them. */
/** Everything the service runs on, opened or made once per process (the composition root). */
export interface Services extends ServicesBase, ProtocolServices, AccountServices, WebhookServices {}

export interface OpenOptions {
  config: Config;
  secret: Buffer;
  logger?: Logger | undefined;
  clock?: Clock;
  /** The command line needs no ephemeral store; the server does. */
  ephemeral?: boolean;
}

/**
 * Opens the durable store and applies pending migrations. A failure names the variable to look
 * at (DATABASE_URL, or IDP_DATA_DIR for the embedded database) and where it led, never a password.
 */
export async function openDurable(config: Config, logger?: Logger): Promise<DurableStore> {
  try {
    return await openAndMigrate(config, logger);
  } catch (error) {
    const variable = config.databaseUrl ? 'DATABASE_URL' : 'IDP_DATA_DIR';
    throw new Error(`${variable}: cannot use the database (${describeDatabase(config)}): ${innermostMessage(error)}`, { cause: error });
  }
}

/** `connect ECONNREFUSED 127.0.0.1:5432` rather than an empty AggregateError or a driver's wrapper. */
function innermostMessage(error: unknown): string {
  let e = error;
  while (e instanceof Error && e.cause instanceof Error) e = e.cause;
  if (e instanceof AggregateError && e.errors[0] instanceof Error) e = e.errors[0];
  return e instanceof Error ? e.message || e.name : String(e);
}

async function openAndMigrate(config: Config, logger?: Logger): Promise<DurableStore> {
  if (!config.databaseUrl) ensureDataDir(config.dataDir);
  const durable = await openDurableStore({
    databaseUrl: config.databaseUrl,
    dataDir: config.databaseUrl ? undefined : embeddedDatabasePath(config.dataDir),
    poolSize: config.databasePoolSize,
    listenUrl: config.databaseListenUrl,
    preparedStatements: config.databasePreparedStatements,
    audits: auditsType(config.auditLog),
    onError: (error) => logger?.warn({ err: error.message }, 'database connection error'),
  });
  try {
    await durable.migrate();
  } catch (error) {
    await durable.close().catch(() => {});
    throw error;
  }
  return durable;
}

/**
 * For a command run beside a development server that holds the embedded database: that
 * database, through the socket the server shares it on (the server applied the migrations).
 * Undefined when the database is PostgreSQL, no server holds it, or the server does not share it.
 */
export async function openSharedDurable(config: Config): Promise<DurableStore | undefined> {
  if (config.databaseUrl || embeddedDatabaseHolder(config.dataDir) === undefined) return undefined;
  return openSharedDurableStore(embeddedSocketPath(config.dataDir), auditsType(config.auditLog));
}

/**
 * The signing keys over the durable store, their private parts sealed with the 'signing-keys'
 * keyring: made here only, for the server and for the commands that list, rotate or reseal keys.
 */
export function createSigningKeyManager(durable: DurableStore, secrets: MasterSecrets, clock: Clock): KeyManager {
  return createKeyManager({ keys: durable.signingKeys, kek: deriveKeyring(secrets, 'signing-keys'), clock });
}

export async function openServices(options: OpenOptions): Promise<Services> {
  const { config, secret } = options;
  const clock = options.clock ?? systemClock;
  const durable = await openDurable(config, options.logger);
  const users = createCachedUsers(durable);
  let source: SignInSource;
  try {
    source = chooseSource(config, users, options.logger);
  } catch (error) {
    await durable.close().catch(() => {});
    throw error;
  }
  const unshare = await shareEmbeddedDatabase(config, durable, options.logger);
  const ephemeral = options.ephemeral === false
    ? createMemoryEphemeralStore(clock)
    : config.redisUrl
      ? createRedisEphemeralStore({ url: config.redisUrl })
      : createMemoryEphemeralStore(clock);
  const secrets: MasterSecrets = { current: secret, previous: config.previousSecrets };
  const keys = createSigningKeyManager(durable, secrets, clock);
  const tableClients = createClientsCache(durable);
  const clients = config.adminConsole ? withConsoleClient(tableClients, consoleBaseUrl(config)) : tableClients;
  const revocations = createRevocationList({ durable, ephemeral }, clock);
  const mailer = createMailer(config, {
    info: (fields, message) => options.logger?.info(fields, message),
    warn: (fields, message) => options.logger?.warn(fields, message),
  });
  const stopKeyEvents = durable.onChange((event) => {
    if (event.kind === 'keys') keys.invalidate();
  });
  const base: ServicesBase = {
    ...deriveServices({ config, secrets, clock, ephemeral, durable, users, factors: factorsForgettingUsers(durable.factors, users), revocations, source, mailer }),
    config,
    secret,
    secrets,
    clock,
    durable,
    ephemeral,
    clients,
    users,
    keys,
    revocations,
    sessions: createSessionStore(ephemeral, clock),
    interactions: createInteractionStore(ephemeral, clock),
    mailer,
    mailBrand: mailBrandOf(config),
    source,
    async close() {
      stopKeyEvents();
      clients.close();
      users.close();
      revocations.close();
      await unshare();
      await Promise.allSettled([ephemeral.close(), durable.close(), mailer.close?.()]);
    },
  };
  const protocol = createProtocolServices(base);
  const webhooks = createWebhookServices({ config, durable, secrets, clock, logger: options.logger });
  const close = base.close;
  return {
    ...base,
    ...protocol,
    ...createAccountServices(base, protocol.userSessions),
    ...webhooks,
    async close() {
      webhooks.subscriptions.close();
      await webhooks.outboxSink.flush();
      await close();
    },
  };
}

/**
 * The embedded database, shared on a socket in the data directory with `idp` commands run
 * beside the server (PGlite serves one process). Without it the commands say the database is in
 * use; the server runs all the same.
 */
async function shareEmbeddedDatabase(config: Config, durable: DurableStore, logger: Logger | undefined): Promise<() => Promise<void>> {
  if (config.databaseUrl || !durable.share) return async () => {};
  try {
    return await durable.share(embeddedSocketPath(config.dataDir));
  } catch (error) {
    logger?.warn({ err: error instanceof Error ? error.message : String(error) }, 'the embedded database is not shared with the command line');
    return async () => {};
  }
}

function chooseSource(config: Config, users: DurableStore['users'], logger: Logger | undefined): SignInSource {
  const { signIn } = config;
  if (signIn.source === 'oidc') return createUpstreamSource(signIn.upstream, users, `${config.baseUrl}/signin/oidc/callback`);
  if (signIn.source === 'ldap') return createLdapSource(signIn.ldap, users, { logger });
  return createLocalSource(users);
}
