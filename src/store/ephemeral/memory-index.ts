/**
 * The in-process indexes (`EphemeralWrite` `index`/`unindex`, `EphemeralStore.indexed`): per
 * key, each member's expiry; the key itself expires with its latest member, as on Redis.
 */

export interface MemoryIndex {
  members: Map<string, number>;
  /** The latest member's expiry: when the whole index goes. */
  expiresAt: number;
}

/** Drops expired members and recomputes the index's expiry; deletes an index left empty. */
function trim(indexes: Map<string, MemoryIndex>, k: string, index: MemoryIndex, now: number): void {
  for (const [member, at] of index.members) if (at <= now) index.members.delete(member);
  index.expiresAt = Math.max(0, ...index.members.values());
  if (index.members.size === 0) indexes.delete(k);
}

export function indexMember(indexes: Map<string, MemoryIndex>, k: string, member: string, expiresAt: number | undefined, now: number): void {
  const index = indexes.get(k) ?? { members: new Map<string, number>(), expiresAt: 0 };
  indexes.set(k, index);
  if (expiresAt === undefined) index.members.delete(member);
  else index.members.set(member, expiresAt);
  trim(indexes, k, index, now);
}

/** Live members, soonest expiry first. */
export function indexedMembers(indexes: Map<string, MemoryIndex>, k: string, now: number): string[] {
  const index = indexes.get(k);
  if (!index) return [];
  trim(indexes, k, index, now);
  return [...index.members].sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : 1)).map(([member]) => member);
}
