/**
 * Keycloak's credentials as its realm export writes them: `secretData` and `credentialData`,
 * each a JSON document in a string. A password becomes the PHC string of its algorithm
 * (pbkdf2 is PBKDF2 with HMAC-SHA1), checked like any imported hash; an OTP credential becomes
 * the base32 secret of an authenticator app when its parameters are the service's.
 */
import { isObject } from './entries.ts';

type Parsed = { ok: true; value: string } | { ok: false; message: string; field: 'secretData' | 'credentialData' };

function jsonOf(text: unknown): Record<string, unknown> | undefined {
  if (typeof text !== 'string') return isObject(text) ? text : undefined;
  try {
    const value: unknown = JSON.parse(text);
    return isObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** RFC 4648 §6 base32, unpadded: how authenticator apps are given a secret. */
function base32(bytes: Buffer): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return bits > 0 ? out + ALPHABET[(value << (5 - bits)) & 31] : out;
}

const b64 = (text: string): string => Buffer.from(text, 'base64').toString('base64').replace(/=+$/, '');

const PBKDF2_DIGESTS: Record<string, string> = { pbkdf2: 'sha1', 'pbkdf2-sha256': 'sha256', 'pbkdf2-sha512': 'sha512' };

/** Keycloak's argon2 keeps its parameters as lists of strings (`"memory": ["7168"]`). */
const parameter = (extra: Record<string, unknown>, name: string): string | undefined => {
  const value = extra[name];
  return Array.isArray(value) ? String(value[0]) : value === undefined ? undefined : String(value);
};

/** A `password` credential as a PHC string (or what is wrong with it). */
export function keycloakPasswordHash(credential: Record<string, unknown>): Parsed {
  const secret = jsonOf(credential.secretData);
  const data = jsonOf(credential.credentialData);
  if (!secret || typeof secret.value !== 'string' || typeof secret.salt !== 'string') return { ok: false, field: 'secretData', message: 'must hold a value and a salt (base64)' };
  if (!data || typeof data.algorithm !== 'string' || typeof data.hashIterations !== 'number') return { ok: false, field: 'credentialData', message: 'must hold an algorithm and hashIterations' };
  const salt = b64(secret.salt);
  const hash = b64(secret.value);
  const digest = PBKDF2_DIGESTS[data.algorithm];
  if (digest !== undefined) return { ok: true, value: `$pbkdf2-${digest}$i=${data.hashIterations}$${salt}$${hash}` };
  if (data.algorithm === 'argon2') {
    const extra = isObject(data.additionalParameters) ? data.additionalParameters : {};
    const type = parameter(extra, 'type') ?? 'id';
    const version = parameter(extra, 'version') === '1.0' ? 16 : 19;
    const memory = parameter(extra, 'memory') ?? '7168';
    const parallelism = parameter(extra, 'parallelism') ?? '1';
    if (type !== 'id' && type !== 'i') return { ok: false, field: 'credentialData', message: `argon2 type ${type} is not accepted (id or i)` };
    return { ok: true, value: `$argon2${type}$v=${version}$m=${memory},t=${data.hashIterations},p=${parallelism}$${salt}$${hash}` };
  }
  return { ok: false, field: 'credentialData', message: `algorithm ${data.algorithm} is not accepted (pbkdf2, pbkdf2-sha256, pbkdf2-sha512, argon2)` };
}

/**
 * An `otp` credential as the base32 secret of an authenticator app, if its codes are the
 * service's (RFC 6238: time-based, SHA-1, 6 digits, 30 s). Keycloak keeps the secret as the
 * text whose UTF-8 bytes the app was given (base32 encoded, in the QR code).
 */
export function keycloakTotpSecret(credential: Record<string, unknown>): Parsed {
  const secret = jsonOf(credential.secretData);
  const data = jsonOf(credential.credentialData) ?? {};
  if (!secret || typeof secret.value !== 'string' || secret.value === '') return { ok: false, field: 'secretData', message: 'must hold a value' };
  const subType = data.subType ?? 'totp';
  const algorithm = data.algorithm ?? 'HmacSHA1';
  const digits = data.digits ?? 6;
  const period = data.period ?? 30;
  if (subType !== 'totp' || algorithm !== 'HmacSHA1' || digits !== 6 || period !== 30) {
    return { ok: false, field: 'credentialData', message: `${String(subType)} ${String(algorithm)} ${String(digits)} digits every ${String(period)} s: the service's authenticator codes are totp HmacSHA1, 6 digits, 30 s` };
  }
  return { ok: true, value: base32(Buffer.from(secret.value, 'utf8')) };
}
