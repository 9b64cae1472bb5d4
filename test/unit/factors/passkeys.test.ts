/**
 * Passkey ceremonies without a browser: the options say what the relying party demands, and a
 * challenge belongs to the browser and ceremony that asked, is taken by the first answer
 * (whatever it holds) and by nobody else. The account page's rules: only the user's own
 * passkeys change, a name is checked, the user's last app or passkey stays.
 */
import { describe, expect, it } from 'vitest';
import type { AuditEvent } from '../../../src/events/audit-events.ts';
import type { AccountChange } from '../../../src/factors/account-change.ts';
import { createPasskeys, type Binding } from '../../../src/factors/passkeys.ts';
import type { SecurityNotices } from '../../../src/mail/security-notices.ts';
import { defaultPasskeyName, listPasskeys, passkeyName, removePasskey, renamePasskey } from '../../../src/factors/passkey-management.ts';
import { firstStandingFactor, type FactorRecord } from '../../../src/store/records.ts';
import { createMemoryEphemeralStore } from '../../../src/store/ephemeral/memory.ts';
import type { DurableStore } from '../../../src/store/types.ts';

const passkey = (id: string, name: string, userId = 'u-1'): FactorRecord => ({
  id, userId, kind: 'passkey', name, secretSealed: null, createdAt: new Date(1000), lastUsedAt: null,
  passkey: { credentialId: `cred-${id}`, publicKey: 'pQECAyYgASFYIA', signCount: 3, transports: ['internal'], backupEligible: true, backedUp: true, aaguid: '' },
});
const totp: FactorRecord = { id: 't', userId: 'u-1', kind: 'totp', name: 'Authenticator app', secretSealed: 'v1.x', createdAt: new Date(0), lastUsedAt: null };

function harness() {
  const ephemeral = createMemoryEphemeralStore();
  const stored = new Map([['cred-p1', passkey('p1', 'Laptop')]]);
  const passkeys = createPasskeys({
    relyingParty: { id: 'id.example.com', name: 'Example', origin: 'https://id.example.com' },
    challenges: ephemeral.passkeyChallenges,
    factors: {
      add: async () => undefined,
      findPasskey: async (credentialId) => stored.get(credentialId),
      recordPasskeyUse: async () => true,
      listForUser: async () => [],
    },
    clock: () => 0,
  });
  return { passkeys };
}

const browserA: Binding = { sessionKey: 'session-a', ceremony: 'interaction-1' };

describe('passkey ceremonies', () => {
  it('ask for user verification, attestation none and a discoverable credential, at the configured relying party', async () => {
    const { passkeys } = harness();
    expect(passkeys.offered).toBe(true);
    const created = await passkeys.registrationOptions(browserA, { id: 'u-1', username: 'ann', displayName: 'Ann', passkeys: [passkey('p1', 'Laptop')] });
    expect(created).toMatchObject({
      rp: { id: 'id.example.com', name: 'Example' }, attestation: 'none',
      authenticatorSelection: { residentKey: 'preferred', userVerification: 'required' },
      excludeCredentials: [{ id: 'cred-p1', type: 'public-key', transports: ['internal'] }], timeout: 300_000,
    });
    const request = await passkeys.authenticationOptions(browserA, 'u-1', [passkey('p1', 'Laptop')]);
    expect(request).toMatchObject({ rpId: 'id.example.com', userVerification: 'required', allowCredentials: [{ id: 'cred-p1', type: 'public-key' }] });
    expect(request.challenge).not.toBe(created.challenge);
  });

  it('keep a challenge for the browser and ceremony that asked, and give it to the first answer only', async () => {
    const { passkeys } = harness();
    await passkeys.authenticationOptions(browserA, 'u-1', [passkey('p1', 'Laptop')]);
    // Another browser, another sign-in of the same browser, a registration: no challenge of theirs.
    expect(await passkeys.authenticate({ ...browserA, sessionKey: 'session-b' }, 'u-1', '{}')).toEqual({ ok: false, reason: 'no_challenge' });
    expect(await passkeys.authenticate({ ...browserA, ceremony: 'interaction-2' }, 'u-1', '{}')).toEqual({ ok: false, reason: 'no_challenge' });
    expect(await passkeys.register(browserA, 'u-1', '{}', 'Laptop')).toEqual({ ok: false, reason: 'no_challenge' });
    // This browser's first answer takes the challenge, whatever it holds; the next finds none.
    expect(await passkeys.authenticate(browserA, 'u-1', JSON.stringify({ id: 'cred-p1', response: {} }))).toEqual({ ok: false, reason: 'not_verified' });
    expect(await passkeys.authenticate(browserA, 'u-1', JSON.stringify({ id: 'cred-p1', response: {} }))).toEqual({ ok: false, reason: 'no_challenge' });
  });

  it('refuse an answer that is not JSON, or names a passkey the user does not have', async () => {
    const { passkeys } = harness();
    for (const answer of ['', 'not json', '[]', JSON.stringify({ id: 'cred-unknown' }), 'x'.repeat(20_000)]) {
      await passkeys.authenticationOptions(browserA, 'u-1', [passkey('p1', 'Laptop')]);
      expect(await passkeys.authenticate(browserA, 'u-1', answer), answer.slice(0, 20)).toEqual({ ok: false, reason: 'unknown_passkey' });
    }
    await passkeys.authenticationOptions(browserA, 'u-2', []);
    expect(await passkeys.authenticate(browserA, 'u-2', JSON.stringify({ id: 'cred-p1' }))).toEqual({ ok: false, reason: 'unknown_passkey' });
    await passkeys.registrationOptions(browserA, { id: 'u-1', username: 'ann', displayName: 'Ann', passkeys: [] });
    expect(await passkeys.register(browserA, 'u-1', 'not json', 'Laptop')).toEqual({ ok: false, reason: 'not_verified' });
  });
});

describe('a user\'s passkeys on the account page', () => {
  const user = { factors: [totp, passkey('p1', 'Laptop'), passkey('p2', 'Passkey')] };

  it('lists name, dates and sync state, never the key', () => {
    expect(listPasskeys(user)).toEqual([
      { id: 'p1', name: 'Laptop', createdAt: new Date(1000), lastUsedAt: null, backedUp: true },
      { id: 'p2', name: 'Passkey', createdAt: new Date(1000), lastUsedAt: null, backedUp: true },
    ]);
    expect(JSON.stringify(listPasskeys(user))).not.toContain('pQECAyYgASFYIA');
  });

  it('names: trimmed, 1 to 100 characters, no control characters; the default is the next free "Passkey N"', () => {
    expect(passkeyName('  Work   laptop ')).toBe('Work laptop');
    expect(passkeyName('   ')).toBeUndefined();
    expect(passkeyName('x'.repeat(101))).toBeUndefined();
    expect(passkeyName('a\u0000b')).toBeUndefined();
    expect(defaultPasskeyName(user)).toBe('Passkey 2');
    expect(defaultPasskeyName({ factors: [] })).toBe('Passkey');
  });

  it('finds the first second factor (the one whose enrolment shows recovery codes): oldest, then lowest id; codes do not count', () => {
    const codes: FactorRecord = { ...totp, id: '0', kind: 'recovery_code', name: 'Recovery code', secretSealed: null, createdAt: new Date(-1) };
    expect(firstStandingFactor([passkey('p2', 'B'), passkey('p1', 'A'), codes])?.id).toBe('p1');
    expect(firstStandingFactor([passkey('p1', 'A'), totp])?.id).toBe('t');
    expect(firstStandingFactor([codes])).toBeUndefined();
  });

  /**
   * A store over `list` (removeUnlessLast keeps the last factor of the standing kinds), with the
   * audit lines and mails a removal makes.
   */
  function factorsOver(list: FactorRecord[]) {
    const removed: string[] = [];
    const renamed: string[] = [];
    const remove = async (id: string) => (removed.push(id), true);
    const factors = {
      removed, renamed, remove,
      rename: async (id: string, name: string) => (renamed.push(`${id}=${name}`), true),
      removeUnlessLast: async (_userId: string, id: string, standing: readonly string[]) =>
        list.some((f) => f.id !== id && standing.includes(f.kind)) ? (await remove(id), 'removed' as const) : 'last' as const,
    };
    const audited: AuditEvent[] = [];
    const mailed: string[] = [];
    const notices: SecurityNotices = { mail: (user, notice, detail) => { mailed.push(`${user.email} ${notice}: ${detail}`); } };
    // The change's transaction: its write on these factors, its events recorded once it returns.
    const change: AccountChange = async (_userId, audit, write) => {
      const { result, events } = await write({ factors } as unknown as DurableStore);
      for (const event of events) audit(event, { inOutbox: true });
      return result;
    };
    return { factors, change, audited, mailed, notices, audit: (event: AuditEvent) => { audited.push(event); } };
  }

  it('renames and removes only the user\'s own passkeys; a removal is audited and mailed', async () => {
    const deps = factorsOver(user.factors);
    const { factors } = deps;
    const own = { id: 'u-1', email: 'ann@example.test', ...user };
    expect(await renamePasskey({ factors }, own, 'p1', ' Work ')).toBe('ok');
    expect(await renamePasskey({ factors }, own, 'p1', '')).toBe('invalid_name');
    expect(await renamePasskey({ factors }, own, 't', 'Not a passkey')).toBe('not_found');
    expect(await renamePasskey({ factors }, own, 'someone-elses', 'Mine')).toBe('not_found');
    expect(await removePasskey(deps, own, 't')).toBe('not_found');
    expect(deps.audited).toEqual([]);
    expect(await removePasskey(deps, own, 'p1')).toBe('ok');
    expect(factors.renamed).toEqual(['p1=Work']);
    expect(factors.removed).toEqual(['p1']);
    expect(deps.audited).toEqual([{ type: 'mfa_removed', user_id: 'u-1', kinds: ['passkey'], actor: 'user' }]);
    expect(deps.mailed).toEqual(['ann@example.test mfa_removed: The passkey "Laptop" was removed.']);
  });

  it('never removes the user\'s last authenticator app or passkey; recovery codes do not count', async () => {
    const codes: FactorRecord = { ...totp, id: 'r', kind: 'recovery_code', name: 'Recovery code', secretSealed: null };
    const onlyPasskey = { id: 'u-1', email: null, factors: [passkey('p1', 'Laptop'), codes] };
    const deps = factorsOver(onlyPasskey.factors);
    expect(await removePasskey(deps, onlyPasskey, 'p1')).toBe('last_second_factor');
    expect(deps.factors.removed).toEqual([]);
    expect([deps.audited, deps.mailed]).toEqual([[], []]);
    const withApp = { id: 'u-1', email: null, factors: [passkey('p1', 'Laptop'), totp] };
    expect(await removePasskey(factorsOver(withApp.factors), withApp, 'p1')).toBe('ok');
    const twoPasskeys = { id: 'u-1', email: null, factors: [passkey('p1', 'Laptop'), passkey('p2', 'Phone')] };
    expect(await removePasskey(factorsOver(twoPasskeys.factors), twoPasskeys, 'p1')).toBe('ok');
  });
});
