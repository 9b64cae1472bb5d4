/**
 * Recovery codes without a database (src/factors/recovery-codes.ts): what a code looks like, how
 * a typed one is read, and that a code hashed under one master secret is found under a keyring
 * that lists it as previous. The store is a map of hashes, used up by delete as the real one is.
 */
import { describe, expect, it } from 'vitest';
import { generateRecoveryCodes, normaliseRecoveryCode, useRecoveryCode, type RecoveryCodeDeps } from '../../../src/factors/recovery-codes.ts';
import { deriveKeyring } from '../../../src/tokens/secret-box.ts';

const OLD = Buffer.alloc(32, 1);
const NEW = Buffer.alloc(32, 2);

function store() {
  const rows = new Map<string, string[]>();
  const factors: RecoveryCodeDeps['factors'] = {
    async replaceRecoveryCodes(userId, hashes) {
      rows.set(userId, [...hashes]);
      return [];
    },
    async consumeRecoveryCode(userId, candidates) {
      const set = rows.get(userId) ?? [];
      const at = set.findIndex((h) => candidates.includes(h));
      if (at < 0) return undefined;
      set.splice(at, 1);
      return { remaining: set.length };
    },
  };
  return { rows, factors };
}

const deps = (factors: RecoveryCodeDeps['factors'], current: Buffer, previous: Buffer[] = []): RecoveryCodeDeps =>
  ({ keys: deriveKeyring({ current, previous }, 'recovery-codes'), factors, clock: () => 0 });

describe('recovery codes', () => {
  it('makes ten distinct codes of 50 bits in groups 4-4-2, and stores only their keyed hashes', async () => {
    const { rows, factors } = store();
    const codes = await generateRecoveryCodes(deps(factors, NEW), 'u-1');
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const code of codes) expect(code).toMatch(/^[0-9a-hjkmnp-tv-z]{4}-[0-9a-hjkmnp-tv-z]{4}-[0-9a-hjkmnp-tv-z]{2}$/);
    const hashes = rows.get('u-1') ?? [];
    expect(hashes).toHaveLength(10);
    for (const code of codes) expect(hashes.join(' ')).not.toContain(code.replace(/-/g, ''));
  });

  it.each([
    ['k7xq-2mfp-9d', 'k7xq2mfp9d'],
    ['K7XQ2MFP9D', 'k7xq2mfp9d'],
    [' k7xq 2mfp-9d ', 'k7xq2mfp9d'],
    ['k7xq--2mfp--9d', 'k7xq2mfp9d'],
    ['oilo-2mfp-9d', '01102mfp9d'],
    ['k7xq-2mfp-9', undefined],
    ['k7xq-2mfp-9dd', undefined],
    ['k7xq-2mfp-9u', undefined],
    ['k7xq-2mfp-9!', undefined],
    ['', undefined],
  ])('reads %j as %j', (typed, expected) => {
    expect(normaliseRecoveryCode(typed)).toBe(expected);
  });

  it('finds a code in any case and without hyphens, once; another user\'s code is not this user\'s', async () => {
    const { factors } = store();
    const d = deps(factors, NEW);
    const codes = await generateRecoveryCodes(d, 'u-1');
    await generateRecoveryCodes(d, 'u-2');
    expect(await useRecoveryCode(d, 'u-2', codes[0]!)).toBeUndefined();
    expect(await useRecoveryCode(d, 'u-1', codes[0]!.toUpperCase().replace(/-/g, ''))).toEqual({ remaining: 9 });
    expect(await useRecoveryCode(d, 'u-1', codes[0]!)).toBeUndefined();
    expect(await useRecoveryCode(d, 'u-1', 'not a code')).toBeUndefined();
  });

  it('takes a code hashed under the previous master secret during a rotation, and not after it', async () => {
    const { factors } = store();
    const codes = await generateRecoveryCodes(deps(factors, OLD), 'u-1');
    expect(await useRecoveryCode(deps(factors, NEW), 'u-1', codes[0]!)).toBeUndefined();
    expect(await useRecoveryCode(deps(factors, NEW, [OLD]), 'u-1', codes[0]!)).toEqual({ remaining: 9 });
  });
});
