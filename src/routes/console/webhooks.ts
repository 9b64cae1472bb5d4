/**
 * `/admin/webhooks`: the endpoints and "Create endpoint" (its secret shown once), and an
 * endpoint's page: "Save" (url, event types one per line, description), "Enable"/"Disable",
 * "Send test event", "Rotate secret" (shown once; the old one signs beside it for 24 hours),
 * "Remove" (its id typed to confirm), and the delivery log a page at a time with "Redeliver". Each calls the operation the API's
 * /webhooks calls (src/admin/webhooks.ts), with the form's version where it saves over what the
 * page showed. The `idp-webhooks` role reaches these pages alone, and may change them.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  createWebhook, getVersionedWebhook, listWebhookDeliveries, listWebhooks, redeliverWebhook, removeWebhook, rotateWebhookSecret, testWebhook, updateWebhook,
  type WebhookChange, type WebhookDeps,
} from '../../admin/webhooks.ts';
import { AdminError } from '../../admin/errors.ts';
import { mayChange } from '../../console/access.ts';
import type { ConsoleAdmin } from '../../console/session.ts';
import type { ConsoleDeps } from './deps.ts';
import { consolePage } from './guard.ts';
import { actorOf, formOf, linesOf, textOf, type FormBody } from './forms.ts';
import { listPageOf, nextPageQuery, pageRefusalOf, requiredVersionOf, type PageRefusal } from './page-forms.ts';
import { renderConsole } from './render.ts';

const ATTEMPTS_PER_PAGE = 25;

type EndpointRequest = FastifyRequest<{ Params: { id: string } }>;

/** What the endpoint form shows: the stored values, or what was typed when it was refused. */
interface EndpointValues {
  url: string;
  event_types: string;
  description: string;
}

interface EndpointPageExtra {
  refusal?: PageRefusal;
  notice?: string;
  secret?: string;
  previousValidUntil?: string;
  values?: EndpointValues;
  /** The delivery log's page (`?cursor=`). */
  query?: Record<string, unknown>;
}

const NEW_ENDPOINT: EndpointValues = { url: '', event_types: '*', description: '' };

/** The endpoint fields of a form, as the API's fields. */
function endpointFieldsOf(form: FormBody): { url: string; event_types: string[]; description: string } {
  return { url: (textOf(form, 'url') ?? '').trim(), event_types: linesOf(form, 'event_types'), description: textOf(form, 'description') ?? '' };
}

const typedValuesOf = (form: FormBody): EndpointValues => ({ url: textOf(form, 'url') ?? '', event_types: textOf(form, 'event_types') ?? '', description: textOf(form, 'description') ?? '' });

export function webhookRoutes(app: FastifyInstance, deps: ConsoleDeps): void {
  const base = `${deps.page.basePath}/admin`;
  const webhookDeps: WebhookDeps = { durable: deps.admin.durable, clock: deps.admin.clock, ...deps.admin.webhooks };
  const idOf = (request: FastifyRequest) => (request as EndpointRequest).params.id;

  async function showList(reply: FastifyReply, admin: ConsoleAdmin, extra: { refusal?: PageRefusal; values?: EndpointValues } = {}, status = 200): Promise<FastifyReply> {
    const endpoints = await listWebhooks(webhookDeps);
    return renderConsole(reply, deps, admin, 'console/webhooks', {
      title: 'Webhooks', area: 'webhooks', endpoints, mayChange: mayChange(admin.roles, 'webhooks'), values: extra.values ?? NEW_ENDPOINT, ...extra,
    }, status);
  }

  /** An endpoint's page as stored now, with a page of its delivery log. */
  async function showEndpoint(reply: FastifyReply, admin: ConsoleAdmin, id: string, extra: EndpointPageExtra = {}, status = 200): Promise<FastifyReply> {
    const { endpoint, version } = await getVersionedWebhook(webhookDeps, id);
    const log = await listWebhookDeliveries(webhookDeps, id, listPageOf(extra.query ?? {}, ATTEMPTS_PER_PAGE));
    const stored: EndpointValues = { url: endpoint.url, event_types: endpoint.event_types.join('\n'), description: endpoint.description };
    return renderConsole(reply, deps, admin, 'console/webhook', {
      title: `Webhook endpoint ${endpoint.id}`, area: 'webhooks', endpoint, version, attempts: log.items, next: nextPageQuery(log.next),
      mayChange: mayChange(admin.roles, 'webhooks'), ...extra, values: extra.values ?? stored,
    }, status);
  }

  /** A change refused: the endpoint's page with the refusal beside its field; a stale save with the current values. */
  async function refused(reply: FastifyReply, admin: ConsoleAdmin, id: string, error: unknown, typed?: EndpointValues): Promise<FastifyReply> {
    const refusal = pageRefusalOf(error);
    if (refusal.notFound) return renderConsole(reply, deps, admin, 'console/message', { title: 'No such webhook endpoint', area: 'webhooks', message: refusal.message, link: { href: `${base}/webhooks`, text: 'Back to the webhooks' } }, 404);
    return showEndpoint(reply, admin, id, { refusal, ...(refusal.stale || !typed ? {} : { values: typed }) }, refusal.status);
  }

  app.get('/webhooks', consolePage(deps, 'webhooks', 'read', async (_request, reply, admin) => showList(reply, admin)));

  app.post('/webhooks', consolePage(deps, 'webhooks', 'change', async (request, reply, admin) => {
    const form = formOf(request);
    try {
      const { endpoint, secret } = await createWebhook(webhookDeps, endpointFieldsOf(form), actorOf(request, admin, deps));
      return await showEndpoint(reply.header('location', `${base}/webhooks/${endpoint.id}`), admin, endpoint.id, { secret, notice: 'Endpoint created.' }, 201);
    } catch (error) {
      const refusal = pageRefusalOf(error);
      return showList(reply, admin, { refusal, values: typedValuesOf(form) }, refusal.status);
    }
  }));

  app.get('/webhooks/:id', consolePage(deps, 'webhooks', 'read', async (request, reply, admin) => {
    const id = idOf(request);
    try {
      return await showEndpoint(reply, admin, id, { query: request.query as Record<string, unknown> });
    } catch (error) {
      return refused(reply, admin, id, error);
    }
  }));

  /** A change of the endpoint's row at the form's version, then its page saying `notice`. */
  function changeRoute(path: string, change: (form: FormBody) => WebhookChange, notice: string, keepTyped: boolean): void {
    app.post(`/webhooks/:id${path}`, consolePage(deps, 'webhooks', 'change', async (request, reply, admin) => {
      const id = idOf(request);
      const form = formOf(request);
      try {
        await updateWebhook(webhookDeps, id, change(form), actorOf(request, admin, deps), requiredVersionOf(form));
        return await showEndpoint(reply, admin, id, { notice });
      } catch (error) {
        return refused(reply, admin, id, error, keepTyped ? typedValuesOf(form) : undefined);
      }
    }));
  }
  changeRoute('', endpointFieldsOf, 'Saved.', true);
  changeRoute('/enable', () => ({ enabled: true }), 'Enabled: deliveries resume.', false);
  changeRoute('/disable', () => ({ enabled: false }), 'Disabled: nothing is delivered to it until it is enabled again.', false);

  app.post('/webhooks/:id/secret', consolePage(deps, 'webhooks', 'change', async (request, reply, admin) => {
    const id = idOf(request);
    try {
      const rotated = await rotateWebhookSecret(webhookDeps, id, actorOf(request, admin, deps), requiredVersionOf(formOf(request)));
      return await showEndpoint(reply, admin, id, { secret: rotated.secret, previousValidUntil: rotated.previousValidUntil.toISOString() });
    } catch (error) {
      return refused(reply, admin, id, error);
    }
  }));

  app.post('/webhooks/:id/remove', consolePage(deps, 'webhooks', 'change', async (request, reply, admin) => {
    const id = idOf(request);
    const form = formOf(request);
    try {
      if (textOf(form, 'confirm_id')?.trim() !== id) {
        throw new AdminError('invalid', `type the endpoint id ${id} to remove it`, [{ path: ['confirm_id'], message: `type the endpoint id ${id} to remove it` }]);
      }
      await removeWebhook(webhookDeps, id, actorOf(request, admin, deps), requiredVersionOf(form));
      return renderConsole(reply, deps, admin, 'console/message', {
        title: 'Webhook endpoint removed', area: 'webhooks', message: `Webhook endpoint ${id} was removed.`, link: { href: `${base}/webhooks`, text: 'Back to the webhooks' },
      });
    } catch (error) {
      return refused(reply, admin, id, error);
    }
  }));

  app.post('/webhooks/:id/test', consolePage(deps, 'webhooks', 'change', async (request, reply, admin) => {
    const id = idOf(request);
    try {
      const { eventId } = await testWebhook(webhookDeps, id);
      return await showEndpoint(reply, admin, id, { notice: `A webhook.test event (${eventId}) is on its way to this endpoint.` }, 202);
    } catch (error) {
      return refused(reply, admin, id, error);
    }
  }));

  app.post('/webhooks/:id/deliveries/:delivery_id/redeliver', consolePage(deps, 'webhooks', 'change', async (request, reply, admin) => {
    const id = idOf(request);
    const deliveryId = (request as FastifyRequest<{ Params: { delivery_id: string } }>).params.delivery_id;
    try {
      await redeliverWebhook(webhookDeps, id, deliveryId);
      return await showEndpoint(reply, admin, id, { notice: `Delivery ${deliveryId} is due again now, from the start of the retry schedule.` }, 202);
    } catch (error) {
      return refused(reply, admin, id, error);
    }
  }));
}
