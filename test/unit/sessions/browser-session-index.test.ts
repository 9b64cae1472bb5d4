/**
 * Each user's index of browser sessions (sessions/browser-session.ts) on the in-process store
 * with an injected clock: kept by sign-in (rotation), renewal (save) and logout (destroy), and
 * expiring with the sessions.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createSessionStore, publicSessionId, SESSION_TTL_SECONDS, type BrowserSession } from '../../../src/sessions/browser-session.ts';
import { createMemoryEphemeralStore } from '../../../src/store/ephemeral/memory.ts';
import { NAMESPACES, type EphemeralStore } from '../../../src/store/types.ts';

describe('browser sessions listed per user', () => {
  let now = Date.UTC(2026, 10, 27, 12);
  let ephemeral: EphemeralStore;
  afterEach(() => ephemeral?.close());

  const open = () => {
    ephemeral = createMemoryEphemeralStore(() => now);
    return createSessionStore(ephemeral, () => now);
  };
  const signedIn = (userId: string): BrowserSession => ({ userId, authTime: now / 1000, amr: ['pwd'], clients: [], createdAt: now / 1000 });

  it('lists a user\'s signed-in sessions, not an anonymous one, and drops the one a new sign-in replaces', async () => {
    const sessions = open();
    const anonymous = sessions.create();
    const first = sessions.rotation(anonymous, signedIn('alice'));
    await ephemeral.write(first.writes);
    const second = sessions.rotation(undefined, signedIn('alice'));
    await ephemeral.write([...second.writes, ...sessions.rotation(undefined, signedIn('bob')).writes]);
    expect((await sessions.listForUser('alice')).map((s) => s.key).sort()).toEqual([first.key, second.key].sort());
    // The first browser signs in again, as bob: its old session leaves alice's list.
    const again = sessions.rotation({ key: first.key, session: first.session }, signedIn('bob'));
    await ephemeral.write(again.writes);
    expect((await sessions.listForUser('alice')).map((s) => s.key)).toEqual([second.key]);
    expect(await ephemeral.indexed(NAMESPACES.userSessions, 'alice')).toEqual([second.key]);
    expect(await sessions.listForUser('bob')).toHaveLength(2);
    expect(publicSessionId(second.key)).not.toBe(second.key);
  });

  it('unlists a destroyed session, and one that expired; a renewed session lives on', async () => {
    const sessions = open();
    const [ended, expiring, renewed] = [0, 1, 2].map(() => sessions.rotation(undefined, signedIn('alice')));
    await ephemeral.write([ended!, expiring!, renewed!].flatMap((s) => s.writes));
    await sessions.destroy(ended!.key, 'alice');
    expect((await sessions.listForUser('alice')).map((s) => s.key)).not.toContain(ended!.key);
    expect(await ephemeral.indexed(NAMESPACES.userSessions, 'alice')).not.toContain(ended!.key);
    now += (SESSION_TTL_SECONDS - 60) * 1000;
    await sessions.save(renewed!.key, renewed!.session);
    now += 120 * 1000;
    expect((await sessions.listForUser('alice')).map((s) => s.key)).toEqual([renewed!.key]);
    expect(await ephemeral.indexed(NAMESPACES.userSessions, 'alice')).toEqual([renewed!.key]);
    now += SESSION_TTL_SECONDS * 1000;
    expect(await sessions.listForUser('alice')).toEqual([]);
    expect(await ephemeral.indexed(NAMESPACES.userSessions, 'alice')).toEqual([]);
  });
});
