/** The headers every response of the public port carries, whatever answers it. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config.ts';

/**
 * What every response carries. Its Content-Security-Policy is for data that must never render
 * as a document; pages and the logo replace it with their own.
 */
export function securityHeaders(config: Pick<Config, 'baseUrl'>): Readonly<Record<string, string>> {
  return {
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'x-frame-options': 'DENY',
    'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
    ...(config.baseUrl.startsWith('https:') ? { 'strict-transport-security': 'max-age=31536000; includeSubDomains' } : {}),
  };
}

export function setResponseHeaders(request: FastifyRequest, reply: FastifyReply, headers: Readonly<Record<string, string>>): void {
  reply.headers(headers);
  reply.header('x-request-id', request.id);
}
