/**
 * Device cookies (src/sessions/device-cookie.ts) as a decision table: which cookies a browser
 * may send are recognised for which account. Good for its own account only, whatever the case
 * and spaces of the name; not when altered, expired, or made under another secret; still good
 * after IDP_SECRET changes with the old one kept as IDP_SECRET_PREVIOUS.
 */
import { describe, expect, it } from 'vitest';
import { createDeviceCookies, DEVICE_COOKIE_TTL_SECONDS, type DeviceCookie } from '../../../src/sessions/device-cookie.ts';
import { deriveKeyring } from '../../../src/tokens/secret-box.ts';

const OLD = Buffer.alloc(32, 1);
const NEW = Buffer.alloc(32, 2);
const ring = (current: Buffer, previous: Buffer[] = []) => deriveKeyring({ current, previous }, 'device-cookies');

/** A browser that holds exactly `cookies`. */
const jar = (...cookies: DeviceCookie[]) => (name: string) => cookies.find((c) => c.name === name)?.value;

describe('device cookies', () => {
  let now = Date.UTC(2026, 0, 15, 9, 0, 0);
  const clock = () => now;

  it('names the cookie by a keyed hash: no account name in it, one name per account', () => {
    const cookies = createDeviceCookies(ring(OLD), clock);
    const alice = cookies.issue('alice');
    expect(alice.name).toMatch(/^idp_device_[A-Za-z0-9_-]{22}$/);
    expect(`${alice.name}=${alice.value}`.toLowerCase()).not.toContain('alice');
    expect(cookies.issue(' ALICE ').name).toBe(alice.name);
    expect(cookies.issue('bob').name).not.toBe(alice.name);
    expect(alice.maxAgeSeconds).toBe(DEVICE_COOKIE_TTL_SECONDS);
  });

  it('recognises a cookie for its own account only, each issue a device of its own', () => {
    const cookies = createDeviceCookies(ring(OLD), clock);
    const alice = cookies.issue('alice');
    const id = cookies.recognise('alice', jar(alice));
    expect(id).toBeDefined();
    expect(cookies.recognise('Alice ', jar(alice))).toBe(id);
    expect(cookies.recognise('alice', jar(cookies.issue('alice')))).not.toBe(id);
    expect(cookies.recognise('bob', jar(alice))).toBeUndefined();
    // Alice's value under Bob's name: the MAC binds the account.
    expect(cookies.recognise('bob', jar({ ...alice, name: cookies.issue('bob').name }))).toBeUndefined();
  });

  it.each([
    ['another id', (v: string) => v.replace(/^[^.]+/, 'AAAAAAAAAAAAAAAAAAAAAA')],
    ['a later expiry', (v: string) => v.replace(/\.(\d+)\./, (_, e: string) => `.${Number(e) + 86400}.`)],
    ['a cut MAC', (v: string) => v.slice(0, -2)],
    ['an extra part', (v: string) => `${v}.x`],
    ['nothing', () => ''],
  ])('refuses a cookie with %s', (_, alter) => {
    const cookies = createDeviceCookies(ring(OLD), clock);
    const alice = cookies.issue('alice');
    expect(cookies.recognise('alice', jar({ ...alice, value: alter(alice.value) }))).toBeUndefined();
  });

  it('refuses a cookie once it has expired', () => {
    const cookies = createDeviceCookies(ring(OLD), clock);
    const alice = cookies.issue('alice');
    now += (DEVICE_COOKIE_TTL_SECONDS - 1) * 1000;
    expect(cookies.recognise('alice', jar(alice))).toBeDefined();
    now += 1000;
    expect(cookies.recognise('alice', jar(alice))).toBeUndefined();
  });

  it('keeps a cookie made under the old secret while it is IDP_SECRET_PREVIOUS, not after', () => {
    const before = createDeviceCookies(ring(OLD), clock).issue('alice');
    const id = createDeviceCookies(ring(OLD), clock).recognise('alice', jar(before));
    expect(createDeviceCookies(ring(NEW, [OLD]), clock).recognise('alice', jar(before))).toBe(id);
    expect(createDeviceCookies(ring(NEW), clock).recognise('alice', jar(before))).toBeUndefined();
    // New ones are made under the new secret.
    const after = createDeviceCookies(ring(NEW, [OLD]), clock).issue('alice');
    expect(after.name).not.toBe(before.name);
    expect(createDeviceCookies(ring(NEW), clock).recognise('alice', jar(after))).toBeDefined();
  });
});
