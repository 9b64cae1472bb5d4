/**
 * Webhook endpoints' signing secrets, sealed at rest under the `webhook-secrets` keyring and
 * bound to their endpoint's id (a sealed secret copied to another row does not open there).
 */
import { openWithKeyring, seal, type Keyring } from './secret-box.ts';

const context = (endpointId: string) => `webhook-secret:${endpointId}`;

export function sealWebhookSecret(ring: Keyring, endpointId: string, secret: string): string {
  return seal(ring.current, secret, context(endpointId));
}

export function openWebhookSecret(ring: Keyring, endpointId: string, sealed: string): string {
  return openWithKeyring(ring, sealed, context(endpointId)).text;
}

/** The secret sealed again under the current key; undefined when it is sealed under it already. */
export function resealedWebhookSecret(ring: Keyring, endpointId: string, sealed: string): string | undefined {
  const opened = openWithKeyring(ring, sealed, context(endpointId));
  return opened.current ? undefined : sealWebhookSecret(ring, endpointId, opened.text);
}
