/**
 * A request's parameters once the route has made them single-valued (routes/shared/params.ts
 * refuses repeated ones), and their parsing with a zod schema into typed values or
 * `invalid_request`. Wire names stay as the RFCs spell them.
 */
import type { z } from 'zod';
import { OAuthError } from '../errors.ts';

export type Params = Readonly<Record<string, string>>;

/** Parses parameters with a zod schema; the first problem becomes the error description. */
export function parseParams<T>(schema: z.ZodType<T>, params: Params): T {
  const result = schema.safeParse(params);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const name = issue?.path.join('.') || 'request';
  const missing = issue?.code === 'invalid_type' && params[name] === undefined;
  throw new OAuthError('invalid_request', missing ? `The ${name} parameter is required.` : `The ${name} parameter is invalid.`);
}
