/** Registered clients. */
import type { Versioned, ClientRecord } from '../records.ts';
import type { IfVersion, PageRequest, UpsertResult } from './shared.ts';

export interface ClientRepository {
  get(clientId: string): Promise<ClientRecord | undefined>;
  /** The client with its row version, read together. */
  getVersioned(clientId: string): Promise<Versioned<ClientRecord> | undefined>;
  list(): Promise<ClientRecord[]>;
  /** Inserts or replaces a whole client; 'unchanged' when the row already held these values. */
  upsert(client: ClientRecord): Promise<UpsertResult>;
  /** Inserts a new client and returns it with its version; undefined when the id is taken (nothing written). */
  insert(client: ClientRecord): Promise<Versioned<ClientRecord> | undefined>;
  /** Applies a partial change; false when the client does not exist (or is not at `ifVersion`). */
  update(clientId: string, change: Partial<Omit<ClientRecord, 'clientId'>>, ifVersion?: IfVersion): Promise<boolean>;
  /** `update`, returning the client as written with its new version (undefined where `update` is false). */
  change(clientId: string, change: Partial<Omit<ClientRecord, 'clientId'>>, ifVersion?: IfVersion): Promise<Versioned<ClientRecord> | undefined>;
  remove(clientId: string, ifVersion?: IfVersion): Promise<boolean>;
  /** Clients by client id. */
  page(request: PageRequest): Promise<ClientRecord[]>;
  count(): Promise<number>;
}
