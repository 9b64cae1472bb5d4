/** The pages' stylesheet, read once; the CSP allows styles from this origin only. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';

export async function assetRoutes(app: FastifyInstance, options: { templatesDir: string }): Promise<void> {
  let css: string;
  try {
    css = readFileSync(join(options.templatesDir, 'assets', 'idp.css'), 'utf8');
  } catch {
    css = '';
  }
  app.get('/assets/idp.css', async (_request, reply) =>
    reply.header('content-type', 'text/css; charset=utf-8').header('cache-control', 'public, max-age=3600').send(css),
  );
}
