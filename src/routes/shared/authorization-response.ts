/**
 * Delivering an authorization response (a code or an error) to the client's redirect URI, in
 * its response mode, always with `iss` (RFC 9207) and `state` when the request had one.
 */
import type { FastifyReply } from 'fastify';
import type { AuthorizationTarget } from '../../sessions/authorization-request.ts';
import { renderFormPost } from './pages.ts';

/** Appends parameters to a registered URI as registered: appended to, never re-serialised. */
export function withQuery(uri: string, values: Record<string, string>, separator: '?' | '#' = '?'): string {
  const encoded = new URLSearchParams(values).toString();
  if (encoded === '') return uri;
  if (separator === '#') return `${uri}#${encoded}`;
  return `${uri}${uri.includes('?') ? '&' : '?'}${encoded}`;
}

export function respondToClient(reply: FastifyReply, target: AuthorizationTarget, issuer: string, values: Record<string, string>): FastifyReply {
  const fields: Record<string, string> = { ...values };
  if (target.state !== undefined) fields.state = target.state;
  fields.iss = issuer;
  if (target.responseMode === 'form_post') return renderFormPost(reply, target.redirectUri, fields);
  const location = withQuery(target.redirectUri, fields, target.responseMode === 'fragment' ? '#' : '?');
  return reply.header('cache-control', 'no-store').redirect(location, 302);
}
