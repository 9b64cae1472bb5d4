/**
 * Standard Webhooks signatures: `v1,` and the base64 of HMAC-SHA256 over
 * `{webhook-id}.{webhook-timestamp}.{body}`, keyed with the bytes of the secret after `whsec_`
 * (base64). During a secret change each secret signs, the signatures separated by spaces.
 */
import { createHmac, randomBytes } from 'node:crypto';

const PREFIX = 'whsec_';

/** A new endpoint secret: `whsec_` and the base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return `${PREFIX}${randomBytes(32).toString('base64')}`;
}

/** Whether `text` is a secret of that form (what the service makes; others are never stored). */
export function isWebhookSecret(text: string): boolean {
  return text.startsWith(PREFIX) && Buffer.from(text.slice(PREFIX.length), 'base64').length >= 24;
}

/** The value of `webhook-signature` for one message, signed with each secret in turn. */
export function signWebhook(secrets: readonly string[], id: string, timestamp: number, body: string): string {
  return secrets.map((secret) => {
    const key = Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
    return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
  }).join(' ');
}
