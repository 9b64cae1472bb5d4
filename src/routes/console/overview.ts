/** `/admin`: the overview. */
import type { FastifyInstance } from 'fastify';
import { mayRead } from '../../console/access.ts';
import type { ConsoleDeps } from './deps.ts';
import { consolePage } from './guard.ts';
import { renderConsole } from './render.ts';

export function overviewRoutes(app: FastifyInstance, deps: ConsoleDeps): void {
  app.get('/', async (request, reply) => {
    return consolePage(deps, 'webhooks', 'read', async (_request, answer, admin) => {
      // The webhooks role reads nothing else: its console starts at its one page.
      if (!mayRead(admin.roles, 'overview')) return answer.redirect(`${deps.page.basePath}/admin/webhooks`, 303);
      return renderConsole(answer, deps, admin, 'console/overview', { title: 'Overview', area: 'overview' });
    }).call(app, request, reply);
  });
}
