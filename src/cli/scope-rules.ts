/**
 * A client may be given the standard scopes and the API scopes that exist (`idp scopes add`, a
 * seed file's `api_scopes`): a typo such as `order.read` is refused when the client is written,
 * not discovered when its tokens lack the scope.
 */
import { isStandardScope } from '../scopes.ts';
import type { DurableStore } from '../store/types.ts';

/** The scopes of `scopes` that are neither standard nor API scopes (of the database, or `alsoKnown`). */
export async function unknownScopes(durable: Pick<DurableStore, 'apiScopes'>, scopes: readonly string[], alsoKnown: readonly string[] = []): Promise<string[]> {
  const custom = scopes.filter((s) => !isStandardScope(s) && !alsoKnown.includes(s));
  if (custom.length === 0) return [];
  const known = new Set(await durable.apiScopes.list());
  return custom.filter((s) => !known.has(s));
}

export function unknownScopeReason(scope: string, remedy = `idp scopes add ${scope}`): string {
  return `scope ${scope} is neither a standard scope nor an API scope (add it first: ${remedy})`;
}
