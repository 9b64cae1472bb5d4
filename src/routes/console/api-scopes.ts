/**
 * `/admin/api-scopes`: the API scopes a page at a time, "Add scope" and "Remove" (with the
 * version the page showed), through the operations the API's /api-scopes calls
 * (src/admin/scopes.ts): the same refusals, word for word, beside the name field.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { addApiScope, apiScopesPage, removeApiScope } from '../../admin/scopes.ts';
import { mayChange } from '../../console/access.ts';
import type { ConsoleAdmin } from '../../console/session.ts';
import type { ConsoleDeps } from './deps.ts';
import { consolePage } from './guard.ts';
import { actorOf, formOf, textOf } from './forms.ts';
import { listPageOf, nextPageQuery, pageRefusalOf, requiredVersionOf, type PageRefusal } from './page-forms.ts';
import { renderConsole } from './render.ts';

const SCOPES_PER_PAGE = 100;

interface ScopesPageExtra {
  refusal?: PageRefusal;
  notice?: string;
  /** The name typed in "Add scope", kept when it was refused. */
  name?: string;
}

export function apiScopeRoutes(app: FastifyInstance, deps: ConsoleDeps): void {
  async function showScopes(reply: FastifyReply, admin: ConsoleAdmin, query: Record<string, unknown>, extra: ScopesPageExtra = {}, status = 200): Promise<FastifyReply> {
    const page = await apiScopesPage(deps.admin.durable, listPageOf(query, SCOPES_PER_PAGE));
    const scopes = page.items.map((scope) => ({ name: scope.name, createdAt: scope.createdAt.toISOString(), version: scope.version }));
    return renderConsole(reply, deps, admin, 'console/api-scopes', {
      title: 'API scopes', area: 'api-scopes', scopes, next: nextPageQuery(page.next), mayChange: mayChange(admin.roles, 'api-scopes'), ...extra,
    }, status);
  }

  app.get('/api-scopes', consolePage(deps, 'api-scopes', 'read', async (request, reply, admin) =>
    showScopes(reply, admin, request.query as Record<string, unknown>)));

  app.post('/api-scopes', consolePage(deps, 'api-scopes', 'change', async (request, reply, admin) => {
    const name = (textOf(formOf(request), 'name') ?? '').trim();
    try {
      await addApiScope(deps.admin, name, actorOf(request, admin, deps));
      return await showScopes(reply, admin, {}, { notice: `API scope ${name} added.` }, 201);
    } catch (error) {
      const refusal = pageRefusalOf(error);
      // A refusal without a field of its own (exists already, reserved) is about the name typed.
      if (Object.keys(refusal.fields).length === 0) refusal.fields.name = [refusal.message];
      return showScopes(reply, admin, {}, { refusal, name }, refusal.status);
    }
  }));

  app.post('/api-scopes/:name/remove', consolePage(deps, 'api-scopes', 'change', async (request, reply, admin) => {
    const { name } = (request as FastifyRequest<{ Params: { name: string } }>).params;
    try {
      await removeApiScope(deps.admin, name, actorOf(request, admin, deps), requiredVersionOf(formOf(request)));
      return await showScopes(reply, admin, {}, { notice: `API scope ${name} removed: it is no longer granted.` });
    } catch (error) {
      const refusal = pageRefusalOf(error);
      return showScopes(reply, admin, {}, { refusal }, refusal.status);
    }
  }));
}
