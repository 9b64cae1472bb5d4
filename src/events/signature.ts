/**
 * Standard Webhooks signatures: `v1,` and the base64 of HMAC-SHA256 over
 * `{webhook-id}.{webhook-timestamp}.{body}`, keyed with the bytes of the secret after `whsec_`
 * (base64). During a secret change each secret signs, the signatures separated by spaces.
 */
import { createHmac, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';

const PREFIX = 'whsec_';

/** A new endpoint secret: `whsec_` and the base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return `${PREFIX}${randomBytes(32).toString('base64')}`;
}

/** Whether `text` is a secret of that form (what the service makes; others are never stored). */
export function isWebhookSecret(text: string): boolean {
  return text.startsWith(PREFIX) && Buffer.from(text.slice(PREFIX.length), 'base64').length >= 24;
}

/** The HMAC key of a secret: the bytes after `whsec_`. */
export function webhookSigningKey(secret: string): KeyObject {
  return createSecretKey(Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64'));
}

/**
 * An endpoint's signing keys, opened and imported once per sealed secret rather than at every
 * attempt: opening the seal and importing the key cost several times the HMAC itself. Bounded:
 * past `max` secrets (endpoints and their previous secrets) it starts over.
 */
export function createSigningKeys(open: (endpointId: string, sealed: string) => string, max = 1000): (endpointId: string, sealed: string) => KeyObject {
  const keys = new Map<string, KeyObject>();
  return (endpointId, sealed) => {
    const id = `${endpointId} ${sealed}`;
    let key = keys.get(id);
    if (key === undefined) {
      if (keys.size >= max) keys.clear();
      key = webhookSigningKey(open(endpointId, sealed));
      keys.set(id, key);
    }
    return key;
  };
}

/** The value of `webhook-signature` for one message, signed with each key in turn. */
export function signWebhook(keys: readonly KeyObject[], id: string, timestamp: number, body: string): string {
  return keys.map((key) => `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`).join(' ');
}
