/**
 * Rendering the service's pages: eta templates (escaping by default), never cached, never
 * framed, under a strict Content-Security-Policy.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import type {} from '@fastify/view';

/** A CSP source for the origin a form may be sent to (or redirected to after a post). */
export function formActionSource(uri: string): string {
  try {
    const url = new URL(uri);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : url.protocol;
  } catch {
    return "'none'";
  }
}

/**
 * `form-action` lists the client's origin too: Chromium applies form-action to the redirects
 * that follow a form post, and signing in ends with a redirect to the client.
 */
function pageCsp(formActions: readonly string[], script: boolean): string {
  return [
    "default-src 'none'",
    // Only the pages that need it run script (WebAuthn; copying recovery codes), and only the service's own files.
    ...(script ? ["script-src 'self'"] : []),
    "style-src 'self'",
    "img-src 'self' data:",
    `form-action 'self' ${formActions.join(' ')}`.trim(),
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
}

export interface PageOptions {
  status?: number;
  /** Extra origins forms on this page may post (or be redirected) to. */
  formActions?: readonly string[];
  /** The page runs the service's own script (the passkey pages, the recovery codes page): `script-src 'self'`. */
  script?: boolean;
}

/** What every page shows of the deployment's brand (IDP_BRAND_*). */
export interface PageBrand {
  name: string | undefined;
  /** A logo is served at BRAND_LOGO_PATH. */
  hasLogo: boolean;
}

export interface PageContext {
  /** Path of the base URL ('' or '/prefix'), for links to assets and actions. */
  basePath: string;
  brand?: PageBrand;
}

export function renderPage(reply: FastifyReply, context: PageContext, template: string, data: Record<string, unknown>, options: PageOptions = {}): FastifyReply {
  reply
    .code(options.status ?? 200)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('content-security-policy', pageCsp(options.formActions ?? [], options.script ?? false));
  return reply.view(template, { assetBase: context.basePath, brand: context.brand, ...data });
}

/** OAuth 2.0 Form Post Response Mode: a page that posts the values to the client by itself. */
export function renderFormPost(reply: FastifyReply, action: string, fields: Record<string, string>): FastifyReply {
  const nonce = randomBytes(16).toString('base64');
  reply
    .code(200)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('content-security-policy', `default-src 'none'; script-src 'nonce-${nonce}'; form-action ${formActionSource(action)}; frame-ancestors 'none'; base-uri 'none'`);
  return reply.view('form-post', {
    title: 'Continuing…',
    action,
    nonce,
    fields: Object.entries(fields).map(([name, value]) => ({ name, value })),
  });
}
