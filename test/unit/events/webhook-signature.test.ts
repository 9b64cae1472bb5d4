/** Standard Webhooks signatures, checked against the specification's published example. */
import { describe, expect, it } from 'vitest';
import { isWebhookSecret, newWebhookSecret, signWebhook } from '../../../src/events/signature.ts';

describe('webhook signatures', () => {
  it('signs the specification example exactly (standard-webhooks libraries, "sign function works")', () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const signature = signWebhook([secret], 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}');
    expect(signature).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('signs with each secret during a change, separated by a space, the current one first', () => {
    const [current, previous] = [newWebhookSecret(), newWebhookSecret()];
    const both = signWebhook([current, previous], 'evt_1', 1700000000, '{}');
    expect(both).toBe(`${signWebhook([current], 'evt_1', 1700000000, '{}')} ${signWebhook([previous], 'evt_1', 1700000000, '{}')}`);
    expect(both.split(' ')).toHaveLength(2);
  });

  it('makes secrets of 32 random bytes after whsec_', () => {
    const secret = newWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    expect(isWebhookSecret(secret)).toBe(true);
    expect(newWebhookSecret()).not.toBe(secret);
  });
});
