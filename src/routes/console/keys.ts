/**
 * `/admin/keys`: the signing keys (kid, state, created, when the current one is due to be
 * replaced), "Rotate", and "Retire" through the API's operations (src/admin/keys.ts). A key
 * whose tokens may still verify is refused with the API's words, and the page then asks to
 * confirm before forcing it (which makes those tokens invalid at once); the current signer is
 * refused without that offer (rotating first is the way). Each change is recorded as the API's
 * are (`key_rotated`, `key_retired`, in the key lock's transaction), with `actor` `console` and the
 * administrator's `admin_sub`.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AdminError } from '../../admin/errors.ts';
import { listKeys, retireKey, rotateKey, type KeyChangeRecording } from '../../admin/keys.ts';
import { mayChange } from '../../console/access.ts';
import type { ConsoleAdmin } from '../../console/session.ts';
import type { SigningKeyRecord } from '../../store/records.ts';
import type { ConsoleDeps } from './deps.ts';
import { consolePage } from './guard.ts';
import { actorOf, formOf, textOf } from './forms.ts';
import { pageRefusalOf, type PageRefusal } from './page-forms.ts';
import { renderConsole } from './render.ts';

const STATE_ORDER: Record<SigningKeyRecord['state'], number> = { current: 0, next: 1, previous: 2, retired: 3 };
const iso = (date: Date | null) => (date === null ? null : date.toISOString());

interface KeysPageExtra {
  refusal?: PageRefusal;
  notice?: string;
  /** A retirement refused while the key's tokens may verify: the page asks to confirm forcing it. */
  confirmForce?: string;
}

export function keyRoutes(app: FastifyInstance, deps: ConsoleDeps): void {
  const { keys, config } = deps.services;
  const consoleKeyChange = (request: FastifyRequest, admin: ConsoleAdmin): KeyChangeRecording =>
    ({ recorder: actorOf(request, admin, deps), clock: deps.services.clock, actor: 'console', adminSub: admin.sub });

  /** When the schedule makes the next key the signer: the current key's start plus the rotation interval. */
  const nextRotationOf = (current: SigningKeyRecord | undefined) =>
    current === undefined ? null : new Date((current.activatedAt ?? current.createdAt).getTime() + config.keyRotationInterval * 1000).toISOString();

  async function showKeys(reply: FastifyReply, admin: ConsoleAdmin, extra: KeysPageExtra = {}, status = 200): Promise<FastifyReply> {
    const records = (await listKeys(keys)).sort((a, b) => STATE_ORDER[a.state] - STATE_ORDER[b.state] || b.createdAt.getTime() - a.createdAt.getTime());
    const current = records.find((key) => key.state === 'current');
    return renderConsole(reply, deps, admin, 'console/keys', {
      title: 'Signing keys', area: 'keys', mayChange: mayChange(admin.roles, 'keys'), nextRotation: nextRotationOf(current),
      keys: records.map((key) => ({ kid: key.kid, state: key.state, createdAt: key.createdAt.toISOString(), activatedAt: iso(key.activatedAt), retiredAt: iso(key.retiredAt) })),
      ...extra,
    }, status);
  }

  app.get('/keys', consolePage(deps, 'keys', 'read', async (_request, reply, admin) => showKeys(reply, admin)));

  app.post('/keys/rotate', consolePage(deps, 'keys', 'change', async (request, reply, admin) => {
    const { key, jwksMaxAgeSeconds } = await rotateKey(keys, consoleKeyChange(request, admin));
    return showKeys(reply, admin, { notice: `Key ${key.kid} signs from now on. Relying parties that cached the key set may take up to ${jwksMaxAgeSeconds} seconds to see it.` });
  }));

  app.post('/keys/:kid/retire', consolePage(deps, 'keys', 'change', async (request, reply, admin) => {
    const { kid } = (request as FastifyRequest<{ Params: { kid: string } }>).params;
    const force = textOf(formOf(request), 'force') === 'true';
    try {
      const { invalidated } = await retireKey(keys, kid, { force, clients: await deps.admin.durable.clients.list() }, consoleKeyChange(request, admin));
      const notice = invalidated
        ? `Key ${kid} is retired. Tokens it signed, which were valid until ${invalidated.verifiesUntil.toISOString()}, no longer verify.`
        : `Key ${kid} is retired.`;
      return await showKeys(reply, admin, { notice });
    } catch (error) {
      const refusal = pageRefusalOf(error);
      // Of the refusals, only that of a previous key (its tokens may still verify) gives way to force.
      const previous = !force && error instanceof AdminError && error.code === 'conflict' && (await listKeys(keys)).some((key) => key.kid === kid && key.state === 'previous');
      return showKeys(reply, admin, { refusal, ...(previous ? { confirmForce: kid } : {}) }, refusal.status);
    }
  }));
}
