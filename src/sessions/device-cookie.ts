/**
 * Device cookies (OWASP, "Slow down online guessing attacks with device cookies"): a browser
 * that signed in to an account gets a cookie for that account, and later guesses from it are
 * counted on their own (throttle.ts), so that failures from elsewhere never lock it out.
 *
 * One cookie per account, named by a keyed hash of the account name (the name is never in
 * clear); the value is `{nonce}.{expiry}.{mac}`: a random id for the device's own count, its
 * expiry, and an HMAC over the account, the id and the expiry under a key derived from
 * IDP_SECRET. It holds no secret: it only says "this browser signed in to this account before".
 * Checked under every key of the ring, so a change of IDP_SECRET (with IDP_SECRET_PREVIOUS)
 * keeps the devices it made known.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { epochSeconds, type Clock } from '../clock.ts';
import { sameBytes } from '../tokens/constant-time.ts';
import { keysOf, type Keyring } from '../tokens/secret-box.ts';
import { canonicalAccount } from './throttle.ts';

/** How long a browser stays known after its last sign-in to the account. */
export const DEVICE_COOKIE_TTL_SECONDS = 90 * 86400;

/** A device cookie to set: its name, value and lifetime (the route adds the attributes). */
export interface DeviceCookie {
  name: string;
  value: string;
  maxAgeSeconds: number;
}

export interface DeviceCookies {
  /** The cookie that makes this browser known for `account` (after a sign-in to it). */
  issue(account: string): DeviceCookie;
  /**
   * The device's id when the browser sent a good cookie for `account` (ours, for this account,
   * not expired); `read` gives the value of a cookie by name.
   */
  recognise(account: string, read: (name: string) => string | undefined): string | undefined;
}

const mac = (key: Buffer, text: string) => createHmac('sha256', key).update(text).digest('base64url');

/** The cookie's name for an account: a keyed hash, so the name tells nothing about whose it is. */
const nameUnder = (key: Buffer, account: string) => `idp_device_${mac(key, `device-cookie-name\n${canonicalAccount(account)}`).slice(0, 22)}`;

const signed = (key: Buffer, account: string, id: string, expiry: number) => mac(key, `device-cookie\n${canonicalAccount(account)}\n${id}\n${expiry}`);

export function createDeviceCookies(ring: Keyring, clock: Clock): DeviceCookies {
  /** The id of `value` when it is a good cookie of `account` under `key`. */
  function idOf(key: Buffer, account: string, value: string | undefined): string | undefined {
    const [id, expiryText, tag, ...rest] = (value ?? '').split('.');
    if (!id || !expiryText || !tag || rest.length > 0 || !/^\d{1,12}$/.test(expiryText)) return undefined;
    const expiry = Number(expiryText);
    if (expiry <= epochSeconds(clock)) return undefined;
    return sameBytes(signed(key, account, id, expiry), tag) ? id : undefined;
  }

  return {
    issue(account) {
      const id = randomBytes(16).toString('base64url');
      const expiry = epochSeconds(clock) + DEVICE_COOKIE_TTL_SECONDS;
      const value = `${id}.${expiry}.${signed(ring.current, account, id, expiry)}`;
      return { name: nameUnder(ring.current, account), value, maxAgeSeconds: DEVICE_COOKIE_TTL_SECONDS };
    },
    recognise(account, read) {
      for (const key of keysOf(ring)) {
        const id = idOf(key, account, read(nameUnder(key, account)));
        if (id) return id;
      }
      return undefined;
    },
  };
}
