/** API scopes. */
import type { ApiScopeRecord } from '../records.ts';
import type { IfVersion, PageRequest } from './shared.ts';

export interface ApiScopeRepository {
  list(): Promise<string[]>;
  get(name: string): Promise<ApiScopeRecord | undefined>;
  /** API scopes by name. */
  page(request: PageRequest): Promise<ApiScopeRecord[]>;
  /** false when the scope already existed. */
  add(name: string): Promise<boolean>;
  /** Adds the scope and returns it with its version; undefined when it already existed (nothing written). */
  insert(name: string): Promise<ApiScopeRecord | undefined>;
  remove(name: string, ifVersion?: IfVersion): Promise<boolean>;
}
