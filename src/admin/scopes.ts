/**
 * API scopes (such as orders.read), and the rule that a client may be given only the standard
 * scopes and the API scopes that exist: a typo such as `order.read` is refused when the client is
 * written, not discovered when its tokens lack the scope.
 */
import { isStandardScope } from '../scopes.ts';
import type { ApiScopeRecord } from '../store/records.ts';
import type { DurableStore, PageRequest } from '../store/types.ts';
import { AdminError, staleOrGone } from './errors.ts';
import { readPage, type Page } from './keyset.ts';
import { recordedChange, type ChangeActor, type ChangeDeps } from './recorded-change.ts';
import { RESERVED_SCOPES, RULE_MESSAGES, isScopeToken } from './rules.ts';

type ScopeStore = Pick<DurableStore, 'apiScopes'>;

/** The scopes of `scopes` that are neither standard nor API scopes (of the database, or `alsoKnown`). */
export async function unknownScopes(durable: ScopeStore, scopes: readonly string[], alsoKnown: readonly string[] = []): Promise<string[]> {
  const custom = scopes.filter((s) => !isStandardScope(s) && !alsoKnown.includes(s));
  if (custom.length === 0) return [];
  const known = new Set(await durable.apiScopes.list());
  return custom.filter((s) => !known.has(s));
}

export function unknownScopeReason(scope: string, remedy = `idp scopes add ${scope}`): string {
  return `scope ${scope} is neither a standard scope nor an API scope (add it first: ${remedy})`;
}

export async function addApiScope(deps: ChangeDeps, name: string, actor: ChangeActor): Promise<ApiScopeRecord> {
  if (!isScopeToken(name)) throw new AdminError('invalid', `scope "${name}": ${RULE_MESSAGES.scopeToken}`, [{ path: ['name'], message: RULE_MESSAGES.scopeToken }]);
  if (RESERVED_SCOPES.includes(name)) throw new AdminError('conflict', `scope ${name} is reserved by the service and cannot be an API scope`);
  return recordedChange(deps, actor, `API scope ${name}`, async (tx) => {
    const added = await tx.apiScopes.insert(name);
    if (!added) throw new AdminError('conflict', `API scope ${name} already exists`);
    return { result: added, change: { action: 'create', resource: 'api_scope', resource_id: name, fields: [] } };
  });
}

export async function listApiScopes(durable: ScopeStore): Promise<string[]> {
  return durable.apiScopes.list();
}

export async function getApiScope(durable: ScopeStore, name: string): Promise<ApiScopeRecord> {
  // A name the table cannot hold (a NUL byte, which PostgreSQL refuses) names no scope.
  const scope = isScopeToken(name) ? await durable.apiScopes.get(name) : undefined;
  if (!scope) throw new AdminError('not_found', `no API scope named ${name}`);
  return scope;
}

export function apiScopesPage(durable: ScopeStore, request: PageRequest): Promise<Page<ApiScopeRecord>> {
  return readPage((r) => durable.apiScopes.page(r), (scope) => scope.name, request);
}

/**
 * Clients that list the scope keep it in their `scopes` column; it is simply no longer granted.
 * With `ifVersion` (the API's If-Match), only the scope at that version is removed.
 */
export async function removeApiScope(deps: ChangeDeps, name: string, actor: ChangeActor, ifVersion?: number): Promise<{ kind: 'removed'; name: string }> {
  if (!isScopeToken(name)) throw new AdminError('not_found', `no API scope named ${name}`);
  return recordedChange(deps, actor, `API scope ${name}`, async (tx) => {
    if (await tx.apiScopes.remove(name, ifVersion)) return { result: { kind: 'removed', name }, change: { action: 'delete', resource: 'api_scope', resource_id: name, fields: [] } };
    if (ifVersion === undefined) throw new AdminError('not_found', `no API scope named ${name}`);
    throw staleOrGone((await tx.apiScopes.get(name)) !== undefined, `API scope ${name}`);
  });
}
