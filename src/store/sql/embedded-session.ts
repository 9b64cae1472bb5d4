/**
 * Who may use the embedded database's one session, and when. PGlite is one PostgreSQL session:
 * the server's own statements and those of every client of the socket (pglite-socket frames
 * the wire protocol, this decides the order) run in it, one at a time. A client takes the
 * session with its first message and keeps it until PostgreSQL is ready for a new query outside
 * any transaction (ReadyForQuery `I`): until then, neither the server nor another client can
 * slip a statement into its transaction or between its Parse and its Bind. The server's own
 * statements wait meanwhile, as PGlite's transactions make each other wait.
 *
 * A client that holds the session (an open transaction, an unfinished sequence) and sends
 * nothing for IDLE_TRANSACTION_MS is ended, and what it left open rolled back, as PostgreSQL's
 * idle_in_transaction_session_timeout does: a `BEGIN` left open cannot stall the server.
 *
 * The session is the server's: the notifications of the triggers are delivered to its listeners
 * (PGlite's parser dispatches them), not to the client, and a client's SET, RESET, DISCARD or
 * UNLISTEN is undone once it lets go of the session, so that the server keeps its settings and
 * its LISTEN.
 */
import { protocol, type PGlite } from '@electric-sql/pglite';
import { CHANGE_CHANNEL } from './connection.ts';
import { IDLE_TRANSACTION_MS, readAnswer, TERMINATE, type Answer } from './embedded-messages.ts';

/** What pglite-socket's handler asks of its queue (its own class is not exported). */
export interface SessionQueue {
  enqueue(handlerId: number, message: Uint8Array, onData: (data: Uint8Array) => void): Promise<number>;
  clearQueueForHandler(handlerId: number): void;
  clearTransactionIfNeeded(handlerId: number): Promise<void>;
}

interface Pending {
  handlerId: number;
  message: Uint8Array;
  onData: (data: Uint8Array) => void;
  resolve: (bytes: number) => void;
  reject: (error: Error) => void;
}

/** Takes PGlite's transaction lock, as its own transactions do, until the returned function is called. */
function takeSession(pglite: PGlite): Promise<() => void> {
  return new Promise((taken) => {
    void pglite._runExclusiveTransaction(() => new Promise<void>((release) => taken(release)));
  });
}

export function createSessionQueue(pglite: PGlite, endClient: (handlerId: number) => void): SessionQueue {
  const queue: Pending[] = [];
  let draining = false;
  let holder: { handlerId: number; release: () => void; restore: boolean } | undefined;
  let idle: NodeJS.Timeout | undefined;

  /** One message, with the session taken; its answer (less the server's notifications) to the client. */
  const execute = async (message: Uint8Array): Promise<Answer> => {
    const { data } = await pglite.runExclusive(() => pglite.execProtocol(message, { throwOnError: false }));
    return readAnswer(data);
  };

  /**
   * Lets go of the session. A client that went away mid-way is rolled back first (ROLLBACK ends
   * its transaction, or the implicit one of an unfinished sequence; Sync ends a sequence that
   * failed); the server's settings and LISTEN are put back if the client changed them.
   */
  const release = async (rollBack: boolean) => {
    const held = holder;
    if (!held) return;
    holder = undefined;
    clearTimeout(idle);
    try {
      if (rollBack) for (const message of [protocol.serialize.query('ROLLBACK'), protocol.serialize.sync()]) await execute(message);
      if (held.restore) await execute(protocol.serialize.query(`RESET ALL; LISTEN "${CHANGE_CHANNEL}"`));
    } finally {
      held.release();
    }
  };

  const run = async (next: Pending) => {
    const held = holder ?? { handlerId: next.handlerId, release: await takeSession(pglite), restore: false };
    holder = held;
    try {
      const answer = await execute(next.message);
      if (answer.forClient.length > 0) next.onData(answer.forClient);
      held.restore ||= answer.changedSession;
      next.resolve(answer.forClient.length);
      // Released meanwhile: the client went away while its message ran.
      if (holder !== held) return;
      // Ready outside a transaction: done with the session. Terminate: gone, whatever it left open.
      if (answer.ready === 'I') await release(false);
      else if (next.message[0] === TERMINATE) await release(true);
      else idle = setTimeout(() => void endIdleClient(next.handlerId), IDLE_TRANSACTION_MS);
    } catch (error) {
      next.reject(error instanceof Error ? error : new Error(String(error)));
    }
  };

  /** Ends the client's connection and takes the session back at once, whether or not its socket reports the end. */
  const endIdleClient = async (handlerId: number) => {
    endClient(handlerId);
    await release(true);
    void drain();
  };

  const drain = async () => {
    if (draining) return;
    draining = true;
    try {
      for (;;) {
        // While a client holds the session, only its own messages run.
        const index = holder ? queue.findIndex((p) => p.handlerId === holder?.handlerId) : 0;
        const next = index < 0 ? undefined : queue.splice(index, 1)[0];
        if (!next) break;
        clearTimeout(idle);
        await run(next);
      }
    } finally {
      draining = false;
    }
  };

  return {
    enqueue(handlerId, message, onData) {
      return new Promise((resolve, reject) => {
        queue.push({ handlerId, message, onData, resolve, reject });
        void drain();
      });
    },
    clearQueueForHandler(handlerId) {
      for (let i = queue.length - 1; i >= 0; i--) {
        if (queue[i]?.handlerId !== handlerId) continue;
        queue.splice(i, 1)[0]?.reject(new Error('the client disconnected'));
      }
    },
    async clearTransactionIfNeeded(handlerId) {
      if (holder?.handlerId !== handlerId) return;
      await release(true);
      void drain();
    },
  };
}
