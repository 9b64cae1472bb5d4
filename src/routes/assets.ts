/**
 * The pages' stylesheet and the brand logo, read once at start; the pages' CSP allows styles and
 * images from this origin only, so nothing is ever loaded from elsewhere.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { BrandConfig } from '../config.ts';
import { brandStylesheet } from './shared/brand.ts';

/** Where the pages find IDP_BRAND_LOGO, whatever its file was called. */
export const BRAND_LOGO_PATH = '/assets/brand-logo';

/** The passkey pages' script. */
export const PASSKEY_SCRIPT_PATH = '/assets/passkeys.js';
/** The recovery codes page's script ("Copy codes"). */
export const RECOVERY_CODES_SCRIPT_PATH = '/assets/recovery-codes.js';

/** A logo is a small picture; anything bigger is a mistake in the configuration. */
const MAX_LOGO_BYTES = 1024 * 1024;

/**
 * An SVG logo is a document that could carry script when opened on its own: it is served with a
 * policy that runs none (and a sandbox), so only its drawing and its own styles take effect.
 */
const SVG_POLICY = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; sandbox";

function readLogo(path: string): Buffer {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    throw new Error(`IDP_BRAND_LOGO ${path} cannot be read: ${(error as Error).message}`, { cause: error });
  }
  if (bytes.length > MAX_LOGO_BYTES) throw new Error(`IDP_BRAND_LOGO ${path} is larger than 1 MB`);
  return bytes;
}

export async function assetRoutes(app: FastifyInstance, options: { templatesDir: string; brand: BrandConfig }): Promise<void> {
  let css: string;
  try {
    css = readFileSync(join(options.templatesDir, 'assets', 'idp.css'), 'utf8');
  } catch {
    css = '';
  }
  if (options.brand.color) css += brandStylesheet(options.brand.color);
  // The service's scripts: the passkey pages' WebAuthn calls, and the recovery codes page's
  // "Copy codes" (their pages' CSP allows script from this origin only).
  for (const [path, file] of [[PASSKEY_SCRIPT_PATH, 'passkeys.js'], [RECOVERY_CODES_SCRIPT_PATH, 'recovery-codes.js']] as const) {
    const script = readFileSync(join(options.templatesDir, 'assets', file), 'utf8');
    app.get(path, async (_request, reply) =>
      reply.header('content-type', 'text/javascript; charset=utf-8').header('cache-control', 'public, max-age=3600').send(script),
    );
  }
  app.get('/assets/idp.css', async (_request, reply) =>
    reply.header('content-type', 'text/css; charset=utf-8').header('cache-control', 'public, max-age=3600').send(css),
  );
  const logo = options.brand.logo;
  if (logo) {
    const bytes = readLogo(logo.path);
    app.get(BRAND_LOGO_PATH, async (_request, reply) => {
      reply.header('content-type', logo.contentType).header('cache-control', 'public, max-age=3600');
      if (logo.contentType === 'image/svg+xml') reply.header('content-security-policy', SVG_POLICY);
      return reply.send(bytes);
    });
  }
}
