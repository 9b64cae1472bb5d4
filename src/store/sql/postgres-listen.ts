/** The PostgreSQL change feed: one dedicated connection in LISTEN, proven by a probe. */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { ChangeEvent, ChangeFeedState } from '../types.ts';
import { CHANGE_CHANNEL, parseChange, type ChangeFeed } from './connection.ts';

/** How long a probe notification may take to come back before the feed counts as not arriving. */
const PROBE_TIMEOUT_MS = 2000;
/** While notifications do not arrive on a live connection, how often the probe is sent again. */
const REPROBE_INTERVAL_MS = 10_000;
/** When the probe could not even be sent (the data connections are away), how soon it is tried again. */
const RESEND_INTERVAL_MS = 1000;

/**
 * Holds one dedicated connection in LISTEN. When it drops it reconnects with a growing delay,
 * and announces "everything changed" since notifications sent meanwhile were lost.
 *
 * A LISTEN that succeeds proves nothing behind a transaction pooler (PgBouncer): the session
 * that listens goes back to the pool and what is sent to it is dropped. So once listening, a
 * probe is sent through a data connection, as the triggers send theirs; the feed counts as
 * listening only when the probe comes back. A connection that cannot be had at start is
 * retried in the background: the feed is then unavailable, which /readyz reports.
 */
export async function listenPostgres(
  listenUrl: string,
  notify: (payload: string) => Promise<void>,
  onEvent: (event: ChangeEvent) => void,
  onError: (error: Error) => void,
): Promise<ChangeFeed> {
  let client: pg.Client | undefined;
  let stopped = false;
  let delay = 100;
  let timer: NodeJS.Timeout | undefined;
  let state: ChangeFeedState = 'unavailable';
  let probe: { payload: string; arrived: () => void } | undefined;
  let reprobe: NodeJS.Timeout | undefined;

  const verify = async (c: pg.Client): Promise<void> => {
    const payload = `probe:${randomBytes(9).toString('base64url')}`;
    const arrived = new Promise<boolean>((resolve) => {
      const timeout = setTimeout(() => resolve(false), PROBE_TIMEOUT_MS);
      timeout.unref();
      probe = { payload, arrived: () => (clearTimeout(timeout), resolve(true)) };
    });
    let sent = true;
    try {
      await notify(payload);
    } catch {
      // The data connections are away: nothing learnt; tried again soon.
      sent = false;
    }
    const ok = sent && (await arrived);
    probe = undefined;
    if (stopped || client !== c) return;
    state = ok ? 'listening' : 'unavailable';
    if (!ok) {
      if (sent) onError(new Error('change notifications do not arrive on the listen connection (a transaction pooler in between?): set IDP_DATABASE_LISTEN_URL to a direct connection'));
      reprobe = setTimeout(() => void verify(c), sent ? REPROBE_INTERVAL_MS : RESEND_INTERVAL_MS);
      reprobe.unref();
    }
  };

  const connect = async (isReconnect: boolean): Promise<void> => {
    const c = new pg.Client({ connectionString: listenUrl, connectionTimeoutMillis: 5000 });
    c.on('notification', (msg) => {
      if (probe && msg.payload === probe.payload) return probe.arrived();
      const event = parseChange(msg.payload);
      if (event) onEvent(event);
    });
    c.on('error', (error) => {
      onError(error);
      scheduleReconnect();
    });
    c.on('end', () => scheduleReconnect());
    client = c;
    await c.connect();
    await c.query(`LISTEN ${CHANGE_CHANNEL}`);
    delay = 100;
    void verify(c);
    if (isReconnect) {
      onEvent({ kind: 'clients' });
      onEvent({ kind: 'users' });
      onEvent({ kind: 'keys' });
      onEvent({ kind: 'revocations' });
      onEvent({ kind: 'apiScopes' });
      onEvent({ kind: 'webhooks' });
      onEvent({ kind: 'webhookDue' });
    }
  };

  const scheduleReconnect = () => {
    state = 'unavailable';
    if (stopped || timer) return;
    if (reprobe) clearTimeout(reprobe);
    client?.removeAllListeners();
    client?.on('error', () => {});
    void client?.end().catch(() => {});
    timer = setTimeout(() => {
      timer = undefined;
      connect(true).catch((error: Error) => {
        onError(error);
        scheduleReconnect();
      });
    }, delay);
    timer.unref();
    delay = Math.min(delay * 2, 5000);
  };

  try {
    await connect(false);
  } catch (error) {
    // Serving goes on (the data connections may work); /readyz says the feed is away.
    onError(error as Error);
    scheduleReconnect();
  }
  return {
    state: () => state,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      if (reprobe) clearTimeout(reprobe);
      client?.removeAllListeners();
      client?.on('error', () => {});
      await client?.end().catch(() => {});
    },
  };
}
