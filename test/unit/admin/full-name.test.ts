/** The one rule for `name` and its parts (admin/full-name.ts), as a decision table. */
import { describe, expect, it } from 'vitest';
import { fullName, nameAfter } from '../../../src/admin/full-name.ts';

const parts = (givenName: string | null, familyName: string | null) => ({ givenName, familyName });

describe('name and its parts', () => {
  it.each([
    ['follows when it was the parts', { ...parts('Ann', 'Lee'), name: 'Ann Lee' }, parts('Anna', 'Lee'), undefined, 'Anna Lee'],
    ['follows when it was absent', { ...parts('Ann', null), name: null }, parts('Ann', 'Lee'), undefined, 'Ann Lee'],
    ['stays when set on its own', { ...parts('Ann', 'Lee'), name: 'Dr. A. Lee' }, parts('Anna', 'Lee'), undefined, 'Dr. A. Lee'],
    ['is what the change sets, when it sets it', { ...parts('Ann', 'Lee'), name: 'Ann Lee' }, parts('Anna', 'Lee'), 'A. L.', 'A. L.'],
    ['stays absent when the parts stay', { ...parts('Ann', 'Lee'), name: null }, parts('Ann', 'Lee'), undefined, null],
    ['goes with the last part', { ...parts('Ann', null), name: 'Ann' }, parts(null, null), undefined, null],
  ] as const)('%s', (_case, before, after, explicit, expected) => {
    expect(nameAfter(before, after, explicit)).toBe(expected);
  });

  it('is "given family" from the parts there are', () => {
    expect(fullName(parts('Ann', 'Lee'))).toBe('Ann Lee');
    expect(fullName(parts(null, 'Lee'))).toBe('Lee');
    expect(fullName(parts('', null))).toBeNull();
  });
});
