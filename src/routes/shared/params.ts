/**
 * Form and query parameters -> single string values, or `invalid_request` (protocol/params.ts
 * parses them with a schema). Wire names stay as the RFCs spell them; a parameter sent twice is
 * refused (RFC 6749 §3.1, §3.2: MUST NOT be included more than once).
 */
import { OAuthError } from '../../errors.ts';

export type Params = Record<string, string>;

/** Flattens a parsed body or query into single string values, refusing repeated parameters. */
export function singleValued(input: unknown): Params {
  if (input === undefined || input === null) return {};
  if (typeof input !== 'object') throw new OAuthError('invalid_request', 'The request parameters are malformed.');
  const params: Params = {};
  for (const [name, value] of Object.entries(input as Record<string, unknown>)) {
    if (Array.isArray(value)) throw new OAuthError('invalid_request', `The ${name} parameter is repeated.`);
    // A NUL can be no part of any value here (and PostgreSQL text cannot hold one).
    if (typeof value !== 'string' || value.includes('\u0000') || name.includes('\u0000')) {
      throw new OAuthError('invalid_request', 'A request parameter is malformed.');
    }
    // RFC 6749 §3.1: parameters sent without a value are treated as omitted.
    if (value !== '') params[name] = value;
  }
  return params;
}
