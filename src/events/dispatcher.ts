/**
 * Webhook delivery, on every instance: claims due attempts (the database hands each to one
 * instance: FOR UPDATE SKIP LOCKED) and makes them, at most PER_ENDPOINT at a time per endpoint
 * and TOTAL in all. A new delivery anywhere wakes it (the change feed's `webhookDue`), and so does
 * an attempt that ends, gathered for WAKE_MS: a busy token endpoint's stream of events and its
 * receivers' answers cost one claim per wake, not one per event. Otherwise it sleeps until the
 * next retry is due, or POLL_MS at most (leases of instances that died, notifications missed).
 * Attempts that end are recorded together (one statement per FINISH_MS or FINISH_BATCH); one
 * ended but not yet recorded is still under its lease: no instance takes it meanwhile, and if
 * this one dies first its delivery is attempted again when the lease ends (at least once).
 * Order per endpoint is not kept: attempts run side by side and retries come later.
 */
import type { DurableStore } from '../store/types.ts';
import { attemptDelivery, recordFinished, type AttemptDeps } from './delivery.ts';
import { WEBHOOK_TIMEOUT_MS } from './webhook-request.ts';

/** Requests in flight per endpoint, and in all, on one instance. */
const PER_ENDPOINT = 16;
const TOTAL = 64;
/** A claimed attempt is this instance's this long: past the request's timeout, with a margin. */
const LEASE_SECONDS = WEBHOOK_TIMEOUT_MS / 1000 + 5;
const POLL_MS = 5000;
const BUSY_POLL_MS = 1000;
const WAKE_MS = 10;
const RACE_MS = 50;
const FINISH_MS = 25;
const FINISH_BATCH = 64;

export interface DeliveryDeps extends AttemptDeps {
  durable: Pick<DurableStore, 'webhooks' | 'transaction' | 'onChange'>;
  onError: (error: unknown) => void;
}

export interface Delivery {
  /** Stops claiming; attempts in flight end by themselves (their leases cover what they leave). */
  stop(): void;
}

export function startDelivery(deps: DeliveryDeps): Delivery {
  const { webhooks } = deps.durable;
  const busy = new Map<string, number>();
  let inFlight = 0;
  let stopped = false;
  let running = false;
  let again = false;
  let timer: NodeJS.Timeout | undefined;

  const schedule = (ms: number) => {
    if (stopped) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => void pump(), Math.max(10, Math.min(ms, POLL_MS)));
    timer.unref();
  };

  type Finished = Awaited<ReturnType<typeof attemptDelivery>>;
  let finished: Finished[] = [];
  let finishTimer: NodeJS.Timeout | undefined;
  let recording = false;
  const record = async (): Promise<void> => {
    if (finishTimer) clearTimeout(finishTimer);
    finishTimer = undefined;
    if (recording || finished.length === 0) return;
    recording = true;
    const batch = finished;
    finished = [];
    try {
      await recordFinished(batch, deps);
    } catch (error) {
      deps.onError(error);
    } finally {
      recording = false;
    }
    // Those that ended meanwhile waited for this record already.
    if (finished.length > 0) void record();
    // Retries are due from now on: the next due time is read again (a claim woken at an
    // answer saw the delivery still under its lease).
    wake();
  };

  // A claim soon, for those gathered meanwhile: new deliveries, room left by attempts that ended.
  let wakeTimer: NodeJS.Timeout | undefined;
  const wake = () => {
    if (stopped || wakeTimer) return;
    wakeTimer = setTimeout(() => {
      wakeTimer = undefined;
      void pump();
    }, WAKE_MS);
    wakeTimer.unref();
  };

  const run = (claimed: Awaited<ReturnType<typeof webhooks.claim>>[number]) => {
    const endpointId = claimed.endpoint.id;
    busy.set(endpointId, (busy.get(endpointId) ?? 0) + 1);
    inFlight++;
    void attemptDelivery(claimed, deps).then((ended) => {
      finished.push(ended);
      if (finished.length >= FINISH_BATCH) void record();
      else finishTimer ??= setTimeout(() => void record(), FINISH_MS);
    }, deps.onError).finally(() => {
      const left = (busy.get(endpointId) ?? 1) - 1;
      if (left === 0) busy.delete(endpointId);
      else busy.set(endpointId, left);
      inFlight--;
      wake();
    });
  };

  const pump = async (): Promise<void> => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = true;
    let claimedAny = false;
    try {
      do {
        again = false;
        const room = TOTAL - inFlight;
        if (room <= 0) break;
        const claimed = await webhooks.claim({ total: room, perEndpoint: PER_ENDPOINT, busy, leaseSeconds: LEASE_SECONDS });
        claimedAny ||= claimed.length > 0;
        for (const attempt of claimed) run(attempt);
        if (claimed.length === room) again = true;
      } while (again && !stopped);
      if (inFlight > 0) {
        // Attempts that end wake a claim: while some are in flight, retries coming due
        // meanwhile are looked for once a second as well.
        schedule(BUSY_POLL_MS);
      } else {
        const dueIn = await webhooks.nextDueIn();
        // Due now but not claimed: it came due between the claim and this reading (a short
        // retry delay), or another instance holds it for the moment; either way, soon again.
        schedule(dueIn === undefined ? POLL_MS : dueIn === 0 && !claimedAny ? RACE_MS : dueIn * 1000);
      }
    } catch (error) {
      deps.onError(error);
      schedule(1000);
    } finally {
      running = false;
    }
    // Woken while the next due time was being read: claim again now rather than at the timer.
    if (again) void pump();
  };

  const unsubscribe = deps.durable.onChange((event) => {
    if (event.kind === 'webhookDue') wake();
  });
  void pump();
  return {
    stop() {
      stopped = true;
      unsubscribe();
      if (timer) clearTimeout(timer);
      if (wakeTimer) clearTimeout(wakeTimer);
      // What ended is recorded still (attempts in flight record themselves when they end).
      void record();
    },
  };
}
