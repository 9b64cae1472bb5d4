/** Sends an authorization response as sessions/sign-in/authorization-response.ts decided it. */
import type { FastifyReply } from 'fastify';
import type { AuthorizationTarget } from '../../sessions/sign-in/authorization-request.ts';
import { authorizationResponse, type ClientResponse } from '../../sessions/sign-in/authorization-response.ts';
import { renderFormPost } from './pages.ts';

export { withQuery } from '../../sessions/sign-in/authorization-response.ts';

export function sendClientResponse(reply: FastifyReply, response: ClientResponse): FastifyReply {
  if (response.mode === 'form_post') return renderFormPost(reply, response.action, response.fields);
  return reply.header('cache-control', 'no-store').redirect(response.location, 302);
}

/** A code or an error for the client (the error handler's way back to it). */
export function respondToClient(reply: FastifyReply, target: AuthorizationTarget, issuer: string, values: Record<string, string>): FastifyReply {
  return sendClientResponse(reply, authorizationResponse(target, issuer, values));
}
