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

export async function healthRoutes(
  app: FastifyInstance,
  options: { durable: DurableStore; ephemeral: EphemeralStore; source?: Pick<SignInSource, 'ping'>; keys?: Pick<KeyManager, 'signer'> },
): Promise<void> {
  app.get('/healthz', async (_request, reply) => reply.header('cache-control', 'no-store').send({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
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
    return reply
      .code(ready ? 200 : 503)
      .header('cache-control', 'no-store')
      .send({ status: ready ? 'ready' : 'unavailable', database, store, changes, ...(directory ? { directory } : {}), ...(signing ? { signing_key: signing } : {}) });
  });
}
