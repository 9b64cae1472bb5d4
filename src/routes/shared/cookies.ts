/** The browser session cookie: an opaque id only; HttpOnly, SameSite=Lax, Secure under https. */
import type { FastifyReply, FastifyRequest } from 'fastify';

export interface CookieSettings {
  secure: boolean;
  maxAgeSeconds: number;
}

/** `__Host-` binds the cookie to this host and path / when it is Secure (RFC 6265bis §4.1.3.2). */
export function sessionCookieName(secure: boolean): string {
  return secure ? '__Host-idp_session' : 'idp_session';
}

export function readSessionCookie(request: FastifyRequest, secure: boolean): string | undefined {
  return readCookie(request, sessionCookieName(secure));
}

export function readCookie(request: FastifyRequest, name: string): string | undefined {
  const header = request.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export function setSessionCookie(reply: FastifyReply, sid: string, settings: CookieSettings): void {
  const attributes = [`${sessionCookieName(settings.secure)}=${sid}`, 'Path=/', 'HttpOnly', 'SameSite=Lax', `Max-Age=${settings.maxAgeSeconds}`];
  if (settings.secure) attributes.push('Secure');
  reply.header('set-cookie', attributes.join('; '));
}

export function clearSessionCookie(reply: FastifyReply, secure: boolean): void {
  setSessionCookie(reply, '', { secure, maxAgeSeconds: 0 });
}

/**
 * A device cookie (sessions/device-cookie.ts): sent only to the sign-in pages, never to script;
 * `__Secure-` under https (not `__Host-`, which would need Path=/).
 */
export const deviceCookieName = (name: string, secure: boolean) => (secure ? `__Secure-${name}` : name);

export function setDeviceCookie(reply: FastifyReply, cookie: { name: string; value: string; maxAgeSeconds: number }, path: string, secure: boolean): void {
  const attributes = [`${deviceCookieName(cookie.name, secure)}=${cookie.value}`, `Path=${path}`, 'HttpOnly', 'SameSite=Lax', `Max-Age=${cookie.maxAgeSeconds}`];
  if (secure) attributes.push('Secure');
  reply.header('set-cookie', attributes.join('; '));
}
