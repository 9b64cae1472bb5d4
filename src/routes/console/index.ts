/**
 * The administration console under `{IDP_BASE_URL}/admin` (or `/admin` of the management port
 * with IDP_ADMIN_API=management, routes/management.ts): server-rendered pages (eta, in
 * templates/console/) that call the administrative layer (src/admin/) directly, as the API
 * does, and work without JavaScript.
 *
 * How to add a page (e.g. /admin/keys):
 * - Routes: a module here exporting `xxxRoutes(app, deps)`, registered in `consoleRoutes` below.
 *   Wrap every handler in `consolePage(deps, area, 'read' | 'change', handler)` (guard.ts): it
 *   resumes the console session (or starts the sign-in), refuses a role without that area with
 *   the 403 page, and checks a POST's `csrf_token`. The handler gets the `ConsoleAdmin`.
 * - Deps: `deps.admin` is the API's own AdminApiDeps (the same operations, the same rules);
 *   `deps.services` the few services a page reads directly. Add to deps.ts rather than reaching
 *   into services from a page.
 * - Template: `templates/console/<page>.eta` starting with
 *   `<% layout('./layout', it) %>`; render with `renderConsole(reply, deps, admin,
 *   'console/<page>', { title, area, ... })` (render.ts): the layout shows the navigation (pages
 *   of console/access.ts CONSOLE_PAGES the role may read), the administrator's name and
 *   "Sign out". Every form: `<input type="hidden" name="csrf_token" value="<%= it.csrfToken %>">`.
 * - Version: a form that changes a row carries `<input type="hidden" name="version">` with the
 *   version read (Versioned.version) and passes it as `ifVersion`; an AdminError `stale` is
 *   answered with forms.ts `staleAnswer`: the page again, status 409, saying so, with the current
 *   values. Field refusals: forms.ts `fieldErrors(error)` by wire name, shown beside each field
 *   (partials/console-field-error), the first also in `role="alert"`.
 * - Actor: pass `actorOf(request, admin, deps)` (forms.ts) as the ChangeActor: the change is
 *   recorded as `admin_change` with `actor` `console` and the administrator's `sub` as `admin_sub`.
 * - One-time secrets: render them as the text of `id="one-time-secret"`, in the answer to the
 *   POST that made them (never in a redirect's target).
 * - Tests: test/helpers/console.ts `signInToConsole` gives a Browser signed in with a role.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { ConsoleDeps } from './deps.ts';
import { consoleSessionRoutes } from './session-routes.ts';
import { overviewRoutes } from './overview.ts';
import { clientRoutes } from './clients.ts';
import { userRoutes } from './users.ts';
import { userConnectionRoutes } from './user-connections.ts';
import { apiScopeRoutes } from './api-scopes.ts';
import { keyRoutes } from './keys.ts';
import { webhookRoutes } from './webhooks.ts';
import { eventRoutes } from './events.ts';

/**
 * Every answer of the console: never stored, never framed, script only from this origin (the
 * console works without it), forms only to this origin.
 */
const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

export const CONSOLE_STYLESHEET_PATH = '/assets/console.css';

export interface ConsoleOptions {
  deps: ConsoleDeps;
  templatesDir: string;
}

/** Registered at the base path: the stylesheet under /assets, the pages under /admin. */
export async function registerConsole(app: FastifyInstance, options: ConsoleOptions): Promise<void> {
  const css = readFileSync(join(options.templatesDir, 'assets', 'console.css'), 'utf8');
  app.get(CONSOLE_STYLESHEET_PATH, async (_request, reply) =>
    reply.header('content-type', 'text/css; charset=utf-8').header('cache-control', 'public, max-age=3600').send(css),
  );
  await app.register((scope) => consoleRoutes(scope, options.deps), { prefix: '/admin' });
}

async function consoleRoutes(app: FastifyInstance, deps: ConsoleDeps): Promise<void> {
  app.addHook('onSend', async (_request, reply) => {
    reply.header('cache-control', 'no-store').header('content-security-policy', CONSOLE_CSP);
  });
  consoleSessionRoutes(app, deps);
  overviewRoutes(app, deps);
  clientRoutes(app, deps);
  userRoutes(app, deps);
  userConnectionRoutes(app, deps);
  apiScopeRoutes(app, deps);
  keyRoutes(app, deps);
  webhookRoutes(app, deps);
  eventRoutes(app, deps);
}
