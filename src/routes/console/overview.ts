/** `/admin`: the overview (src/console/overview.ts), from the same probes as /readyz. */
import type { FastifyInstance } from 'fastify';
import { mayRead } from '../../console/access.ts';
import { readOverview } from '../../console/overview.ts';
import { checkReadiness } from '../health.ts';
import type { ConsoleDeps } from './deps.ts';
import { consolePage } from './guard.ts';
import { renderConsole } from './render.ts';

export function overviewRoutes(app: FastifyInstance, deps: ConsoleDeps): void {
  const { services } = deps;
  // Every console role reaches this route: the webhooks role reads nothing else, so its console starts at its one page.
  app.get('/', consolePage(deps, 'webhooks', 'read', async (_request, reply, admin) => {
    if (!mayRead(admin.roles, 'overview')) return reply.redirect(`${deps.page.basePath}/admin/webhooks`, 303);
    const overview = await readOverview({
      readiness: () => checkReadiness({ durable: services.durable, ephemeral: services.ephemeral }),
      keys: () => services.keys.list(),
      durable: services.durable,
      mailer: services.mailer,
      rotationIntervalSeconds: services.config.keyRotationInterval,
    });
    return renderConsole(reply, deps, admin, 'console/overview', { title: 'Overview', area: 'overview', overview });
  }));
}
