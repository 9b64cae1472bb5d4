/**
 * The embedded database over the PostgreSQL protocol, on a Unix socket in the data directory:
 * PGlite serves one process, so the process that holds it (the development server, or a
 * command run while none does) serves it to every other client: `psql -h DATA_DIR -U postgres`,
 * the command line's `pg`. pglite-socket reads the protocol; embedded-session.ts decides whose
 * turn it is in the one session PGlite has.
 *
 * Whoever connects is the database's superuser without a password, as PostgreSQL's peer
 * authentication would let the directory's owner in: the socket (0600) is bound only inside a
 * directory no one else may enter (0700).
 */
import { chmodSync, rmSync, statSync } from 'node:fs';
import net from 'node:net';
import { dirname } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketHandler, type PGLiteSocketHandlerOptions } from '@electric-sql/pglite-socket';
import { idleTimeoutMessage } from './embedded-messages.ts';
import { createSessionQueue } from './embedded-session.ts';

/** Serves `pglite` on `socketPath` until the returned function is called. */
export async function serveEmbedded(pglite: PGlite, socketPath: string): Promise<() => Promise<void>> {
  // The chmod after binding would leave a window: the directory must already be closed to others.
  const directory = dirname(socketPath);
  if ((statSync(directory).mode & 0o077) !== 0) throw new Error(`${directory} is open to other users: the database is not served from there`);
  // A socket left by a process that was killed: nobody listens on it any more.
  rmSync(socketPath, { force: true });
  const sockets = new Map<number, net.Socket>();
  const queue = createSessionQueue(pglite, (handlerId) => {
    const socket = sockets.get(handlerId);
    socket?.end(idleTimeoutMessage(), () => socket.destroy());
  });
  const handlers = new Set<PGLiteSocketHandler>();
  const server = net.createServer((socket) => {
    // The handler's type names the library's own queue class, which it does not export; ours has its three methods.
    const handler = new PGLiteSocketHandler({ queryQueue: queue as unknown as PGLiteSocketHandlerOptions['queryQueue'], closeOnDetach: true });
    sockets.set(handler.handlerId, socket);
    handlers.add(handler);
    socket.once('close', () => {
      sockets.delete(handler.handlerId);
      handlers.delete(handler);
    });
    // A client that breaks the protocol or resets its connection is detached; nothing to report.
    handler.addEventListener('error', () => {});
    handler.attach(socket).catch(() => socket.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  });
  chmodSync(socketPath, 0o600);
  return async () => {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    await Promise.all([...handlers].map((handler) => handler.detach(true)));
    await closed;
    rmSync(socketPath, { force: true });
  };
}
