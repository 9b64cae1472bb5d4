/**
 * A change of a user's account made by the user (a password, a second factor, recovery codes,
 * the profile): written with the events that record it in one transaction
 * (events/in-transaction.ts), so that they reach the outbox if and only if it commits, and a
 * process killed right after answering loses none. Once committed, the events are logged through
 * the request's audit and this instance forgets its cached copy of the user (its next read sees
 * the change at once; the database tells the other instances). What is no database write (a
 * mail, the browser sessions in the ephemeral store) follows the commit.
 */
import type { Clock } from '../clock.ts';
import { recordedTransaction, recorderOf, type RecordedWrite } from '../events/in-transaction.ts';
import type { Audit } from '../events/record.ts';
import type { DurableStore } from '../store/types.ts';

export type AccountChange = <T>(userId: string, audit: Audit, write: (tx: DurableStore) => Promise<RecordedWrite<T>>) => Promise<T>;

export interface AccountChangeDeps {
  durable: Pick<DurableStore, 'transaction'>;
  clock: Clock;
  /** Drops this instance's cached copy of the user. */
  forget(userId: string): void;
}

export function createAccountChange(deps: AccountChangeDeps): AccountChange {
  return async (userId, audit, write) => {
    try {
      return await recordedTransaction(deps.durable, deps.clock, recorderOf(audit), write);
    } finally {
      deps.forget(userId);
    }
  };
}
