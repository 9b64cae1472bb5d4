/**
 * The service in the test's own process: the real Services (src/composition/services.ts) on the embedded
 * PGlite database in a temporary directory and the in-process ephemeral store, seeded as
 * `idp seed` seeds, and the real app (src/app.ts) answering through Fastify's `inject`, with no
 * port. Its base URL is an origin that exists nowhere on the network; test/helpers/http-transport.ts
 * routes that origin here, so the relying-party helpers and the cookie-jar browser drive it as
 * they drive a spawned `idp serve`.
 *
 * Every call into src/ that the in-process tests make is in this file (configuration, services,
 * seed, app, logger; the migrated database comes from embedded-database.ts), so that a changed
 * signature there is fixed in one place.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { buildApp } from '../../src/app.ts';
import { RefusedError, type CliContext } from '../../src/cli/context.ts';
import { runSeed } from '../../src/cli/seed.ts';
import type { Clock } from '../../src/clock.ts';
import { parseConfig, type Config } from '../../src/config.ts';
import { embeddedSocketPath } from '../../src/data-dir.ts';
import { createLogger } from '../../src/logging.ts';
import { openServices, type Services } from '../../src/composition/services.ts';
import { embeddedSocketUrl } from '../../src/store/sql/connection.ts';
import { serveOrigin } from './http-transport.ts';
import { copyMigratedDatabase } from './embedded-database.ts';
import { tempDir, withFreeManagementPort, withRunWideBudgets } from './process.ts';

export interface InProcessOptions {
  /** A seed file's content (the README's Command line section), written as `idp seed` writes it. */
  seed?: object;
  /** More of the service's environment (IDP_TOKEN_RATE_LIMIT, IDP_BRAND_NAME, ...). */
  env?: Record<string, string>;
  /** The service's clock (the system's by default): a test moves it to pass a time limit. */
  clock?: Clock;
}

export interface InProcessApp {
  /** The base URL, served only in this process (through httpFetch). */
  base: string;
  issuer: string;
  /** Runs SQL on the app's embedded database, as an administrator with psql would (`$1` parameters). */
  sql<T extends Record<string, unknown> = Record<string, unknown>>(text: string, values?: unknown[]): Promise<T[]>;
  /** What the app logged so far, one JSON line each. */
  logs(): string;
  /** The app's own services, for a test that calls what the routes call (services.userSessions). */
  services: Services;
  close(): Promise<void>;
}

function configFor(env: Record<string, string>): Config {
  const parsed = parseConfig(env);
  if (!parsed.ok) throw new Error(`the in-process app's configuration: ${parsed.message}`);
  return parsed.config;
}

/** Runs the CLI's own seed command on `seed`, with the app's durable store. */
async function seedWith(seed: object, services: Services, dir: string): Promise<void> {
  const file = join(dir, 'seed.json');
  writeFileSync(file, JSON.stringify(seed));
  const said: string[] = [];
  const context: CliContext = {
    config: services.config,
    secret: services.secret,
    clock: services.clock,
    json: false,
    openDurable: async () => services.durable,
    // The app's own mailer, left open: the app closes it.
    mailer: () => services.mailer,
    closeMailer: async () => [],
    audit: () => {},
    out: (line) => said.push(line),
    err: (line) => said.push(line),
    readStdin: async () => '',
    runProgram: async () => undefined,
  };
  try {
    await runSeed([file], context);
  } catch (error) {
    const details = error instanceof RefusedError ? error.details.join('; ') : '';
    throw new Error(`idp seed (in process): ${error instanceof Error ? error.message : String(error)} ${details} ${said.join(' ')}`, { cause: error });
  }
}

/** Opens, seeds and builds the app; everything is closed and removed by `close()`. */
export async function startInProcess(options: InProcessOptions = {}): Promise<InProcessApp> {
  const data = tempDir('idp-in-process-');
  const base = `http://idp-${randomBytes(4).toString('hex')}.test`;
  const lines: string[] = [];
  const closers: Array<() => Promise<void> | void> = [() => data.remove()];
  const close = async () => {
    for (const closer of closers.splice(0).reverse()) await closer();
  };
  try {
    const config = configFor({ IDP_BASE_URL: base, IDP_DATA_DIR: data.path, IDP_SECRET: randomBytes(32).toString('hex'), LOG_LEVEL: 'warn', ...withFreeManagementPort(withRunWideBudgets(options.env ?? {})) });
    if (!config.secret) throw new Error('the in-process app needs IDP_SECRET');
    await copyMigratedDatabase(config.dataDir);
    const logger = createLogger(config.logLevel, { write: (line: string) => void lines.push(line) });
    const services = await openServices({ config, secret: config.secret, logger, ...(options.clock ? { clock: options.clock } : {}) });
    closers.push(() => services.close());
    await services.keys.ensureSigningKey();
    if (options.seed) await seedWith(options.seed, services, data.path);
    const app = await buildApp(config, services, logger);
    closers.push(() => app.close());
    await app.ready();
    closers.push(serveOrigin(base, (request) => inject(app, request)));
    // As an administrator would: over the PostgreSQL protocol, on the socket the app serves.
    const shared = new pg.Pool({ connectionString: embeddedSocketUrl(embeddedSocketPath(config.dataDir)), max: 1 });
    closers.push(() => shared.end());
    return {
      base,
      issuer: `${base}/`,
      async sql<T>(text: string, values: unknown[] = []) {
        return (await shared.query(text, values)).rows as T[];
      },
      logs: () => lines.join(''),
      services,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

type App = Awaited<ReturnType<typeof buildApp>>;

/** A fetch Request answered by the app's `inject`, as a fetch Response (Set-Cookie lines kept apart). */
async function inject(app: App, request: Request): Promise<Response> {
  const url = new URL(request.url);
  const headers: Record<string, string> = { host: url.host };
  request.headers.forEach((value, name) => (headers[name] = value));
  const payload = request.body ? Buffer.from(await request.arrayBuffer()) : undefined;
  const method = request.method as 'GET';
  const answer = await app.inject({ method, url: `${url.pathname}${url.search}`, headers, ...(payload ? { payload } : {}) });
  const answerHeaders = new Headers();
  for (const [name, value] of Object.entries(answer.headers)) {
    for (const one of Array.isArray(value) ? value : [value]) if (one !== undefined) answerHeaders.append(name, String(one));
  }
  const withoutBody = [204, 205, 304].includes(answer.statusCode) || request.method === 'HEAD';
  return new Response(withoutBody ? null : new Uint8Array(answer.rawPayload), { status: answer.statusCode, headers: answerHeaders });
}
