/**
 * The authorization response (a code or an error) as the client must receive it: at its
 * redirect URI, in its response mode, always with `iss` (RFC 9207) and with `state` when the
 * request had one (RFC 6749 §4.1.2). Routes only send what this decides.
 */
import type { AuthorizationTarget } from './authorization-request.ts';

export type ClientResponse =
  /** query (RFC 6749 §4.1.2) or fragment (OAuth 2.0 Multiple Response Types §2): a 302 there. */
  | { mode: 'redirect'; location: string }
  /** OAuth 2.0 Form Post Response Mode: a page that posts the fields to `action` by itself. */
  | { mode: 'form_post'; action: string; fields: Record<string, string> };

/** Appends parameters to a registered URI as registered: appended to, never re-serialised. */
export function withQuery(uri: string, values: Record<string, string>, separator: '?' | '#' = '?'): string {
  const encoded = new URLSearchParams(values).toString();
  if (encoded === '') return uri;
  if (separator === '#') return `${uri}#${encoded}`;
  return `${uri}${uri.includes('?') ? '&' : '?'}${encoded}`;
}

export function authorizationResponse(target: AuthorizationTarget, issuer: string, values: Record<string, string>): ClientResponse {
  const fields: Record<string, string> = { ...values };
  if (target.state !== undefined) fields.state = target.state;
  fields.iss = issuer;
  if (target.responseMode === 'form_post') return { mode: 'form_post', action: target.redirectUri, fields };
  return { mode: 'redirect', location: withQuery(target.redirectUri, fields, target.responseMode === 'fragment' ? '#' : '?') };
}
