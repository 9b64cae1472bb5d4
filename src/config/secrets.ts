/** The master secret (IDP_SECRET) and the previous ones (IDP_SECRET_PREVIOUS), read without ever echoing them. */
import { z } from 'zod';

const MASTER_SECRET_BYTES = 32;

/** Hex, or RFC 4648 base64 (standard or URL-safe alphabet, padded or not), at least 32 bytes once decoded. */
export const masterSecret = z
  .string()
  .optional()
  .transform((v, ctx) => {
    if (v === undefined || v.trim() === '') return undefined;
    const read = readMasterSecret(v.trim());
    if ('problem' in read) {
      ctx.addIssue({ code: 'custom', message: read.problem });
      return z.NEVER;
    }
    return read.bytes;
  });

/** IDP_SECRET_PREVIOUS: comma-separated secrets, each as IDP_SECRET. */
export const previousSecrets = z
  .string()
  .optional()
  .transform((v, ctx) => {
    const entries = (v ?? '').split(',').map((e) => e.trim()).filter((e) => e !== '');
    const secrets: Buffer[] = [];
    for (const [i, entry] of entries.entries()) {
      const read = readMasterSecret(entry);
      if ('problem' in read) {
        ctx.addIssue({ code: 'custom', message: `${entries.length > 1 ? `(entry ${i + 1}) ` : ''}${read.problem}` });
        return z.NEVER;
      }
      secrets.push(read.bytes);
    }
    return secrets;
  });

/** The decoded secret, or what is wrong with it (never the value itself: it is a secret). */
export function readMasterSecret(text: string): { bytes: Buffer } | { problem: string } {
  const bytes = decodeSecret(text);
  if (bytes === undefined) return { problem: 'must be written as base64, base64url or hex' };
  if (bytes.length < MASTER_SECRET_BYTES) return { problem: `must be at least ${MASTER_SECRET_BYTES} random bytes, but decodes to ${bytes.length}` };
  return { bytes };
}

function decodeSecret(s: string): Buffer | undefined {
  if (/^(?:[0-9a-fA-F]{2})+$/.test(s)) return Buffer.from(s, 'hex');
  // Either alphabet, not both: `+/` is standard base64 (RFC 4648 §4), `-_` base64url (§5).
  if (/^[A-Za-z0-9+/]+={0,2}$/.test(s)) return Buffer.from(s, 'base64');
  if (/^[A-Za-z0-9_-]+={0,2}$/.test(s)) return Buffer.from(s.replace(/=+$/, ''), 'base64url');
  return undefined;
}
