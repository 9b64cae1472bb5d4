/**
 * What the console's overview shows: whether the database, the short-lived store and mail are
 * up, the signing keys (the current kid and when the schedule rotates it), the webhook
 * endpoints that fail or were disabled, and the locked accounts.
 */
import type { Mailer } from '../mail/mailer.ts';
import type { SigningKeyRecord, UserRecord, WebhookEndpointRecord } from '../store/records.ts';
import type { DurableStore } from '../store/types.ts';

export type UpDown = 'up' | 'down';

export interface Overview {
  database: UpDown;
  store: UpDown;
  /** `off`: no mail can be sent (production without IDP_SMTP_URL); `down`: the last messages failed. */
  mail: UpDown | 'off';
  mailSent: number | undefined;
  mailFailed: number | undefined;
  currentKid: string | undefined;
  /** ISO 8601: when the current key stops signing (its successor takes over). */
  nextRotation: string | undefined;
  keys: Array<{ kid: string; state: string }>;
  webhooks: Array<{ id: string; url: string; problem: string }>;
  locked: Array<{ id: string; username: string; name: string | null }>;
  /** How many locked accounts there are (the list shows the first few). */
  lockedCount: number;
}

export interface OverviewDeps {
  /** The readiness probes of /readyz: 'ok' or not. */
  readiness(): Promise<{ database: string; store: string }>;
  keys(): Promise<SigningKeyRecord[]>;
  durable: Pick<DurableStore, 'webhooks' | 'users'>;
  mailer: Pick<Mailer, 'available' | 'results'>;
  /** IDP_KEY_ROTATION_INTERVAL, in seconds. */
  rotationIntervalSeconds: number;
}

const LOCKED_SHOWN = 20;

function webhookProblem(endpoint: WebhookEndpointRecord): string | undefined {
  if (endpoint.disabledReason === 'gone') return 'disabled: the endpoint answered 410 Gone';
  if (endpoint.disabledReason === 'failing') return 'disabled: it failed for too long';
  if (!endpoint.enabled) return 'disabled';
  if (endpoint.failingSince) return `failing since ${endpoint.failingSince.toISOString()}`;
  return undefined;
}

function mailState(mailer: OverviewDeps['mailer']): Pick<Overview, 'mail' | 'mailSent' | 'mailFailed'> {
  if (!mailer.available) return { mail: 'off', mailSent: undefined, mailFailed: undefined };
  const results = mailer.results?.();
  // A mail server that only failed so far is down; the log mailer (no server) is always up.
  const down = results !== undefined && results.failed > 0 && results.sent === 0;
  return { mail: down ? 'down' : 'up', mailSent: results?.sent, mailFailed: results?.failed };
}

export async function readOverview(deps: OverviewDeps): Promise<Overview> {
  const [ready, keys, endpoints, locked] = await Promise.all([
    deps.readiness(),
    deps.keys().catch(() => []),
    deps.durable.webhooks.list().catch(() => []),
    deps.durable.users.locked(LOCKED_SHOWN).catch(() => ({ users: [] as UserRecord[], count: 0 })),
  ]);
  const current = keys.find((k) => k.state === 'current');
  const since = current ? (current.activatedAt ?? current.createdAt).getTime() : undefined;
  return {
    database: ready.database === 'ok' ? 'up' : 'down',
    store: ready.store === 'ok' ? 'up' : 'down',
    ...mailState(deps.mailer),
    currentKid: current?.kid,
    nextRotation: since === undefined ? undefined : new Date(since + deps.rotationIntervalSeconds * 1000).toISOString(),
    keys: keys.filter((k) => k.state !== 'retired').map((k) => ({ kid: k.kid, state: k.state })),
    webhooks: endpoints.flatMap((e) => {
      const problem = webhookProblem(e);
      return problem ? [{ id: e.id, url: e.url, problem }] : [];
    }),
    locked: locked.users.map((u) => ({ id: u.subject, username: u.username, name: u.name })),
    lockedCount: locked.count,
  };
}
