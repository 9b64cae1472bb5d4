/**
 * Idempotency keys of the administration API's POST requests: the same caller sending the same
 * request again with the same key within 24 hours gets the first answer (its status, body and
 * headers) and changes nothing; the key with another request is refused. The first request
 * claims the key in the short-lived store before it runs, so of two sent at once only one runs.
 * An answer may hold a generated client secret: it is kept sealed under a key derived from
 * IDP_SECRET, never in clear in Redis.
 */
import { createHash } from 'node:crypto';
import { NAMESPACES, type EphemeralStore } from '../store/types.ts';
import { deriveKey, open, seal } from '../tokens/secret-box.ts';
import { AdminError } from './errors.ts';

export const IDEMPOTENCY_TTL_SECONDS = 24 * 3600;

type Entry = { request: string; state: 'running' } | { request: string; state: 'answered'; sealed: string };

export interface IdempotentRequest {
  clientId: string;
  /** The Idempotency-Key header as sent. */
  key: string;
  /** Method, path and body: what makes a request the same one. */
  method: string;
  path: string;
  body: unknown;
}

/** `A`: what a request answered (status, body, headers), as it is given again. */
export type IdempotencyClaim<A> =
  | { kind: 'replay'; answer: A }
  /** This request runs: keep its answer, or give the key up when it fails (nothing changed). */
  | { kind: 'run'; keep(answer: A): Promise<void>; giveUp(): Promise<void> };

const digest = (text: string) => createHash('sha256').update(text).digest('base64url');

export function createIdempotency(ephemeral: Pick<EphemeralStore, 'idempotencyKeys' | 'get' | 'set' | 'delete'>, secret: Buffer) {
  const sealing = deriveKey(secret, 'admin-idempotency');
  const ns = NAMESPACES.adminIdempotency;
  return {
    async claim<A>(request: IdempotentRequest): Promise<IdempotencyClaim<A>> {
      // The key is the caller's own: another client's same key is another key.
      const storeKey = `${request.clientId}:${digest(request.key)}`;
      const fingerprint = digest(JSON.stringify([request.method, request.path, request.body ?? null]));
      if (await ephemeral.idempotencyKeys.claim(storeKey, { request: fingerprint, state: 'running' } satisfies Entry, IDEMPOTENCY_TTL_SECONDS)) {
        return {
          kind: 'run',
          keep: (answer) => ephemeral.set(ns, storeKey, { request: fingerprint, state: 'answered', sealed: seal(sealing, JSON.stringify(answer), storeKey) } satisfies Entry, IDEMPOTENCY_TTL_SECONDS),
          giveUp: () => ephemeral.delete(ns, storeKey),
        };
      }
      const entry = await ephemeral.get<Entry>(ns, storeKey);
      if (entry && entry.request !== fingerprint) throw new AdminError('key_reused', 'this Idempotency-Key was used with another request: use a new key for a new request');
      if (entry?.state !== 'answered') throw new AdminError('conflict', 'a request with this Idempotency-Key is still running: send it again once it is answered');
      return { kind: 'replay', answer: JSON.parse(open(sealing, entry.sealed, storeKey)) as A };
    },
  };
}

export type Idempotency = ReturnType<typeof createIdempotency>;
