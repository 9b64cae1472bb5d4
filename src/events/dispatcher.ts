/**
 * Webhook delivery, on every instance: claims due attempts (the database hands each to one
 * instance: FOR UPDATE SKIP LOCKED) and makes them, at most PER_ENDPOINT at a time per endpoint
 * and TOTAL in all. The events an instance writes on its own (the outbox sink's batches: a busy
 * token endpoint's stream) it takes at once, claimed as they are written (`reserve`, `adopt`):
 * no notification, no claim. A delivery written otherwise anywhere (in a transaction, by the
 * command line, or past this instance's room) wakes it (the change feed's `webhookDue`), and so
 * does an attempt that ends while due work was left for want of room, gathered for WAKE_MS.
 * Otherwise it sleeps until the next retry is due, or POLL_MS at most (leases of instances that
 * died, notifications missed).
 * Attempts that end are recorded together (one statement per FINISH_MS or FINISH_BATCH); one
 * ended but not yet recorded is still under its lease: no instance takes it meanwhile, and if
 * this one dies first its delivery is attempted again when the lease ends (at least once).
 * Order per endpoint is not kept: attempts run side by side and retries come later.
 */
import type { ClaimedAttempt, ClaimLimits, DurableStore } from '../store/types.ts';
import { attemptDelivery, recordFinished, type AttemptDeps } from './delivery.ts';
import type { ClaimingDelivery } from './outbox-sink.ts';
import { REQUESTS_PER_ENDPOINT } from './webhook-agents.ts';
import { WEBHOOK_TIMEOUT_MS } from './webhook-request.ts';

/** Requests in flight per endpoint, and in all, on one instance. */
const PER_ENDPOINT = REQUESTS_PER_ENDPOINT;
const TOTAL = 4 * REQUESTS_PER_ENDPOINT;
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

export interface Delivery extends ClaimingDelivery {
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
  // A reservation is out: the outbox is writing this instance's events claimed.
  let reserved = false;
  // Due deliveries may have been left unclaimed for want of room: an attempt that ends makes some.
  let roomWanted = false;

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
    if (batch.some((f) => f.next.state === 'pending')) wake();
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

  const run = (claimed: ClaimedAttempt) => {
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
      if (roomWanted) wake();
    });
  };

  /** Whether due work may have been left behind by a claim of `claimed` with this room. */
  const leftBehind = (claimed: readonly ClaimedAttempt[], limits: ClaimLimits): boolean => {
    if (claimed.length >= limits.total) return true;
    const taken = new Map<string, number>();
    for (const c of claimed) taken.set(c.endpoint.id, (taken.get(c.endpoint.id) ?? 0) + 1);
    return [...taken].some(([id, n]) => n + (limits.busy.get(id) ?? 0) >= limits.perEndpoint);
  };
  const limitsNow = (): ClaimLimits => ({ total: TOTAL - inFlight, perEndpoint: PER_ENDPOINT, busy: new Map(busy), leaseSeconds: LEASE_SECONDS });

  const pump = async (): Promise<void> => {
    if (stopped) return;
    if (running || reserved) {
      again = true;
      return;
    }
    running = true;
    let claimedAny = false;
    try {
      do {
        again = false;
        const limits = limitsNow();
        if (limits.total <= 0) {
          roomWanted = true;
          break;
        }
        const claimed = await webhooks.claim(limits);
        claimedAny ||= claimed.length > 0;
        for (const attempt of claimed) run(attempt);
        roomWanted = leftBehind(claimed, limits);
        if (claimed.length === limits.total) again = true;
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
    reserve() {
      if (stopped || running || reserved) return undefined;
      const limits = limitsNow();
      if (limits.total <= 0) return undefined;
      reserved = true;
      return limits;
    },
    adopt(claimed) {
      reserved = false;
      // After a stop, what was claimed is left to its lease (attempted again when it ends).
      if (!stopped) for (const attempt of claimed) run(attempt);
      if (again) {
        again = false;
        void pump();
      }
    },
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
