/**
 * One operation of the administration API as data: its method and path, the zod schemas of its
 * body and query (which validate requests and make the OpenAPI document alike), whether it needs
 * If-Match or takes an Idempotency-Key, its answers, and what it does (a call into src/admin/).
 */
import type { z } from 'zod';
import type { AdminArea, AdminCaller } from '../../admin/api-access.ts';
import type { ChangeActor } from '../../admin/recorded-change.ts';
import type { AdminApiDeps } from './deps.ts';

export type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

/** What an operation answers; turned into HTTP by one function (send.ts), and kept as is for a replay. */
export interface Answer {
  status: number;
  body?: unknown;
  /** The row version the ETag names. */
  version?: number | undefined;
  /** Path of the resource made, below the API's base path. */
  location?: string;
  /** Query of the next page, when there is one (as pairs where a parameter repeats). */
  next?: Record<string, string> | Array<[string, string]> | undefined;
}

export interface Call<B, Q> {
  caller: AdminCaller;
  params: Record<string, string>;
  body: B;
  query: Q;
  /** From If-Match, for the operations that need it. */
  ifVersion: number | undefined;
  /** The caller as the actor of the changes src/admin/ makes (and records in their transactions). */
  actor: ChangeActor;
  deps: AdminApiDeps;
}

/** One answer of an operation: what it means, and the schema of its JSON body (src/admin/answer-schemas.ts); none when it has no body. */
export interface Response {
  description: string;
  body?: z.ZodType;
  /** It carries the resource's ETag (the answer's version). */
  etag?: true;
}

export interface Operation<B = unknown, Q = unknown> {
  method: Method;
  /** OpenAPI path template below the base path: `/clients/{client_id}`. */
  path: string;
  operationId: string;
  summary: string;
  area?: AdminArea;
  body?: { schema: z.ZodType<B>; mediaType: 'application/json' | 'application/merge-patch+json'; optional?: boolean };
  query?: z.ZodType<Q>;
  ifMatch?: boolean;
  /** A POST that takes an Idempotency-Key. */
  idempotent?: boolean;
  /** The answers besides the errors every call may get. */
  responses: Record<number, Response>;
  handle(call: Call<B, Q>): Promise<Answer>;
}

/** Keeps an operation's body and query types tied to its schemas. */
export function operation<B = undefined, Q = undefined>(op: Operation<B, Q>): Operation {
  return op as unknown as Operation;
}
