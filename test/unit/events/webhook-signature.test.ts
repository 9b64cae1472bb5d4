/** Standard Webhooks signatures, checked against the specification's published example. */
import { describe, expect, it } from 'vitest';
import { createSigningKeys, isWebhookSecret, newWebhookSecret, signWebhook, webhookSigningKey } from '../../../src/events/signature.ts';

describe('webhook signatures', () => {
  it('signs the specification example exactly (standard-webhooks libraries, "sign function works")', () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const signature = signWebhook([webhookSigningKey(secret)], 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}');
    expect(signature).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('signs with each secret during a change, separated by a space, the current one first', () => {
    const [current, previous] = [newWebhookSecret(), newWebhookSecret()];
    const both = signWebhook([current, previous].map(webhookSigningKey), 'evt_1', 1700000000, '{}');
    expect(both).toBe(`${signWebhook([webhookSigningKey(current)], 'evt_1', 1700000000, '{}')} ${signWebhook([webhookSigningKey(previous)], 'evt_1', 1700000000, '{}')}`);
    expect(both.split(' ')).toHaveLength(2);
  });

  it('makes secrets of 32 random bytes after whsec_', () => {
    const secret = newWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    expect(isWebhookSecret(secret)).toBe(true);
    expect(newWebhookSecret()).not.toBe(secret);
  });

  it('opens a sealed secret once, a new one (after a rotation) again, and starts over past its bound', () => {
    const secrets = new Map([['sealed-1', newWebhookSecret()], ['sealed-2', newWebhookSecret()], ['sealed-3', newWebhookSecret()]]);
    const opened: string[] = [];
    const keyOf = createSigningKeys((endpointId, sealed) => {
      opened.push(`${endpointId}/${sealed}`);
      return secrets.get(sealed) as string;
    }, 2);
    const sign = (sealed: string) => signWebhook([keyOf('ep_a', sealed)], 'evt_1', 1700000000, '{}');
    expect(sign('sealed-1')).toBe(signWebhook([webhookSigningKey(secrets.get('sealed-1') as string)], 'evt_1', 1700000000, '{}'));
    sign('sealed-1');
    keyOf('ep_b', 'sealed-1');
    expect(opened).toEqual(['ep_a/sealed-1', 'ep_b/sealed-1']);
    expect(sign('sealed-2')).not.toBe(sign('sealed-1'));
    expect(opened).toEqual(['ep_a/sealed-1', 'ep_b/sealed-1', 'ep_a/sealed-2', 'ep_a/sealed-1']);
  });
});
