/**
 * GET /healthz (the process runs) and GET /readyz (the database, the store and any directory
 * answer, the signing key opens under the secrets in force, and the database's change
 * notifications arrive).
 */
import type { FastifyInstance } from 'fastify';
import type { SignInSource } from '../sources/types.ts';
import type { DurableStore, EphemeralStore } from '../store/types.ts';
import type { KeyManager } from '../tokens/keys.ts';

const READY_TIMEOUT_MS = 2000;

function withTimeout(check: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([check, timeout]).finally(() => clearTimeout(timer));
}

async function probe(check: () => Promise<void>): Promise<'ok' | 'unavailable'> {
  try {
    await withTimeout(check(), READY_TIMEOUT_MS);
    return 'ok';
  } catch {
    return 'unavailable';
  }
}

export interface ReadinessDeps {
  durable: DurableStore;
  ephemeral: EphemeralStore;
  source?: Pick<SignInSource, 'ping'> | undefined;
  keys?: Pick<KeyManager, 'signer'> | undefined;
}

/** What /readyz answers (also the console's overview): each dependency 'ok' or 'unavailable', and whether all are. */
export async function checkReadiness(options: ReadinessDeps) {
  const ping = options.source?.ping?.bind(options.source);
  const keys = options.keys;
  const [database, store, directory, signing] = await Promise.all([
    probe(() => options.durable.ping()),
    probe(() => options.ephemeral.ping()),
    ping ? probe(ping) : undefined,
    // The signer is kept in memory once opened: this costs nothing but after a key change.
    keys ? probe(async () => void (await keys.signer())) : undefined,
  ]);
  // Without the change feed, SQL edits of clients and users and key rotations go unnoticed here.
  const changes = options.durable.changeFeed() === 'listening' ? 'ok' : 'unavailable';
  const ready = database === 'ok' && store === 'ok' && changes === 'ok' && directory !== 'unavailable' && signing !== 'unavailable';
  return { ready, database, store, changes, ...(directory ? { directory } : {}), ...(signing ? { signing_key: signing } : {}) };
}

export async function healthRoutes(app: FastifyInstance, options: ReadinessDeps): Promise<void> {
  app.get('/healthz', async (_request, reply) => reply.header('cache-control', 'no-store').send({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    const { ready, ...checks } = await checkReadiness(options);
    return reply
      .code(ready ? 200 : 503)
      .header('cache-control', 'no-store')
      .send({ status: ready ? 'ready' : 'unavailable', ...checks });
  });
}
