/**
 * GET /healthz (the process runs) and GET /readyz (the database, the store and any directory
 * answer, and the database's change notifications arrive).
 */
import type { FastifyInstance } from 'fastify';
import type { SignInSource } from '../sources/types.ts';
import type { DurableStore, EphemeralStore } from '../store/types.ts';

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
  options: { durable: DurableStore; ephemeral: EphemeralStore; source?: Pick<SignInSource, 'ping'> },
): Promise<void> {
  app.get('/healthz', async (_request, reply) => reply.header('cache-control', 'no-store').send({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    const ping = options.source?.ping?.bind(options.source);
    const [database, store, directory] = await Promise.all([
      probe(() => options.durable.ping()),
      probe(() => options.ephemeral.ping()),
      ping ? probe(ping) : undefined,
    ]);
    // Without the change feed, SQL edits of clients and users and key rotations go unnoticed here.
    const changes = options.durable.changeFeed() === 'listening' ? 'ok' : 'unavailable';
    const ready = database === 'ok' && store === 'ok' && changes === 'ok' && directory !== 'unavailable';
    return reply
      .code(ready ? 200 : 503)
      .header('cache-control', 'no-store')
      .send({ status: ready ? 'ready' : 'unavailable', database, store, changes, ...(directory ? { directory } : {}) });
  });
}
