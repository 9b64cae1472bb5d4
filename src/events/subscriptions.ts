/**
 * The event types that enabled webhook endpoints subscribe to, kept in memory on every
 * instance and reloaded when an endpoint changes anywhere (the change feed's `webhooks`).
 * Until the first load, and while a reload fails, every type counts as subscribed: the outbox
 * statement itself writes nothing for a type without a subscriber.
 */
import type { DurableStore } from '../store/types.ts';

export interface Subscriptions {
  has(type: string): boolean;
  /** Resolves when the types in memory are those of the database at the call (tests, start). */
  ready(): Promise<void>;
  close(): void;
}

export function createSubscriptions(durable: Pick<DurableStore, 'webhooks' | 'onChange'>, onError: (error: unknown) => void): Subscriptions {
  let types: Set<string> | undefined;
  let loading: Promise<void> = Promise.resolve();
  // Of two loads that overlap, the later one's answer stands, whichever arrives last.
  let generation = 0;
  const load = () => {
    const mine = ++generation;
    loading = durable.webhooks.subscribedTypes().then((list) => {
      if (mine === generation) types = new Set(list);
    }, (error: unknown) => {
      if (mine === generation) types = undefined;
      onError(error);
    });
    return loading;
  };
  const stop = durable.onChange((event) => {
    if (event.kind === 'webhooks') void load();
  });
  void load();
  return {
    has: (type) => types === undefined || types.has(type) || types.has('*'),
    ready: () => loading,
    close: stop,
  };
}
