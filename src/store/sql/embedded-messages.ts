/**
 * The few PostgreSQL backend messages (protocol 3.0: a type byte, a length, a body) that the
 * embedded database's socket reads in PGlite's answers or writes itself.
 */
import { CHANGE_CHANNEL } from './connection.ts';

/** The backend messages of one answer: what goes to the client, and what it says about the session. */
export interface Answer {
  forClient: Uint8Array;
  /** The status of the last ReadyForQuery (`I` idle, `T` in a transaction, `E` in a failed one), if any. */
  ready: string | undefined;
  /** Whether a statement changed the session's settings or its LISTEN. */
  changedSession: boolean;
}

const NOTIFICATION = 0x41; // 'A'
const COMMAND_COMPLETE = 0x43; // 'C'
const READY_FOR_QUERY = 0x5a; // 'Z'
export const TERMINATE = 0x58; // 'X'
const SESSION_COMMANDS = /^(SET|RESET|DISCARD|UNLISTEN)\b/;

/** A notification's channel: after the sender's process id (4 bytes), a C string. */
function channelOf(body: Uint8Array): string {
  const end = body.indexOf(0, 4);
  return Buffer.from(body.subarray(4, end)).toString('utf8');
}

/** Walks the backend messages of an answer (PGlite answers a message whole). */
export function readAnswer(data: Uint8Array): Answer {
  const buffer = Buffer.from(data);
  const kept: Buffer[] = [];
  let ready: string | undefined;
  let changedSession = false;
  for (let at = 0; at + 5 <= buffer.length;) {
    const end = at + 1 + buffer.readInt32BE(at + 1);
    const type = buffer[at];
    const body = buffer.subarray(at + 5, end);
    if (type === READY_FOR_QUERY) ready = String.fromCharCode(body[0] ?? 0);
    if (type === COMMAND_COMPLETE && SESSION_COMMANDS.test(body.toString('latin1'))) changedSession = true;
    if (!(type === NOTIFICATION && channelOf(body) === CHANGE_CHANNEL)) kept.push(buffer.subarray(at, end));
    at = end;
  }
  return { forClient: Buffer.concat(kept), ready, changedSession };
}

/** How long a client holding the session may wait before its next message. */
export const IDLE_TRANSACTION_MS = 10_000;

/** An ErrorResponse `FATAL 25P03`, as PostgreSQL ends a session idle in a transaction. */
export function idleTimeoutMessage(): Buffer {
  const fields = [['S', 'FATAL'], ['V', 'FATAL'], ['C', '25P03'], ['M', 'terminating connection due to idle-in-transaction timeout']];
  const body = Buffer.concat([...fields.map(([code, text]) => Buffer.from(`${code}${text}\0`)), Buffer.from([0])]);
  const header = Buffer.alloc(5);
  header.write('E', 0, 'latin1');
  header.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([header, body]);
}
