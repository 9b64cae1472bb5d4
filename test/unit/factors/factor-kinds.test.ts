/**
 * The list of a user's second factors (src/factors/factor-kinds.ts), as the administration API,
 * the command line and the console show it: every kind through its own description, named
 * factors by when they were set up whatever their kind, recovery codes last as one entry.
 */
import { describe, expect, it } from 'vitest';
import { FACTOR_KINDS, factorKind, listFactors } from '../../../src/factors/factor-kinds.ts';
import type { FactorKind, FactorRecord } from '../../../src/store/records.ts';

let next = 0;
function row(kind: FactorKind, name: string, createdAt: string, lastUsedAt: string | null = null): FactorRecord {
  next += 1;
  return { id: `f${next}`, userId: 'u1', kind, name, secretSealed: null, createdAt: new Date(createdAt), lastUsedAt: lastUsedAt === null ? null : new Date(lastUsedAt) };
}

describe('second factor kinds', () => {
  it('describes each stored kind once, with the words a person reads', () => {
    expect(FACTOR_KINDS.map((k) => [k.kind, k.label])).toEqual([['totp', 'Authenticator app'], ['passkey', 'Passkey'], ['recovery_code', 'Recovery codes']]);
    expect(factorKind('passkey').label).toBe('Passkey');
  });

  it('lists a passkey set up before the app first, and the recovery codes last as one entry with how many are left', () => {
    const factors = [
      row('passkey', 'Laptop', '2026-01-01T00:00:00Z', '2026-03-01T00:00:00Z'),
      row('recovery_code', 'Recovery code', '2026-01-01T00:00:01Z'),
      row('recovery_code', 'Recovery code', '2026-01-01T00:00:01Z', '2026-04-01T00:00:00Z'),
      row('totp', 'Authenticator app', '2026-02-01T00:00:00Z'),
      row('passkey', 'Phone', '2026-02-02T00:00:00Z'),
    ];
    expect(listFactors({ factors })).toEqual([
      { kind: 'passkey', name: 'Laptop', createdAt: new Date('2026-01-01T00:00:00Z'), lastUsedAt: new Date('2026-03-01T00:00:00Z') },
      { kind: 'totp', name: 'Authenticator app', createdAt: new Date('2026-02-01T00:00:00Z'), lastUsedAt: null },
      { kind: 'passkey', name: 'Phone', createdAt: new Date('2026-02-02T00:00:00Z'), lastUsedAt: null },
      { kind: 'recovery_code', name: 'Recovery code', createdAt: new Date('2026-01-01T00:00:01Z'), lastUsedAt: new Date('2026-04-01T00:00:00Z'), remaining: 2 },
    ]);
  });

  it('lists nothing for a user without a factor', () => {
    expect(listFactors({ factors: [] })).toEqual([]);
  });
});
