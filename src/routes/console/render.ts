/**
 * Rendering a console page: the layout (templates/console/layout.eta) with the navigation of the
 * pages the administrator may open, their name, the sign-out form and the CSRF token every form
 * carries. The console's own headers (no-store, its CSP) are set on every answer by index.ts.
 */
import type { FastifyReply } from 'fastify';
import { pagesFor, type ConsoleArea } from '../../console/access.ts';
import type { ConsoleAdmin } from '../../console/session.ts';
import { sessionCsrfToken } from '../../sessions/csrf.ts';
import type { ConsoleDeps } from './deps.ts';

/** What the console's CSRF tokens are for: one console session's forms. */
export const CSRF_PURPOSE = 'console';

export interface ConsolePageData {
  /** The page's <h1> and <title>. */
  title: string;
  /** The navigation's current entry. */
  area?: ConsoleArea;
  [key: string]: unknown;
}

export function renderConsole(reply: FastifyReply, deps: ConsoleDeps, admin: ConsoleAdmin | undefined, template: string, data: ConsolePageData, status = 200): FastifyReply {
  const base = `${deps.page.basePath}/admin`;
  reply.code(status).header('content-type', 'text/html; charset=utf-8');
  return reply.view(template, {
    assetBase: deps.page.basePath,
    brand: deps.page.brand,
    base,
    admin: admin && { name: admin.name, roles: admin.roles },
    nav: admin ? pagesFor(admin.roles).map((page) => ({ ...page, href: `${base}${page.path}`, current: page.area === data.area })) : [],
    csrfToken: admin ? sessionCsrfToken(deps.csrfKey, admin.key, CSRF_PURPOSE) : '',
    ...data,
  });
}
