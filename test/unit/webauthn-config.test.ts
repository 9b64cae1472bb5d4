/** The passkeys' relying party id: the host of IDP_BASE_URL, or a parent domain of it named by IDP_WEBAUTHN_RP_ID. */
import { describe, expect, it } from 'vitest';
import { parseConfig, type Config } from '../../src/config.ts';
import { rpIdProblem } from '../../src/config/webauthn.ts';

const config = (env: Record<string, string>): Config => {
  const result = parseConfig(env);
  if (!result.ok) throw new Error(result.message);
  return result.config;
};

describe('IDP_WEBAUTHN_RP_ID', () => {
  it('defaults to the host of IDP_BASE_URL; the origin is the base URL\'s, path and port as given', () => {
    expect(config({ IDP_BASE_URL: 'https://ID.Example.com/idp' }).webauthn).toEqual({ rpId: 'id.example.com', origin: 'https://id.example.com' });
    expect(config({ IDP_BASE_URL: 'http://localhost:3927' }).webauthn).toEqual({ rpId: 'localhost', origin: 'http://localhost:3927' });
    expect(config({}).webauthn).toEqual({ rpId: 'localhost', origin: 'http://localhost:3000' });
  });

  it('takes the host itself or a parent domain of it', () => {
    expect(config({ IDP_BASE_URL: 'https://id.example.com', IDP_WEBAUTHN_RP_ID: 'example.com' }).webauthn.rpId).toBe('example.com');
    expect(config({ IDP_BASE_URL: 'https://a.b.example.com', IDP_WEBAUTHN_RP_ID: 'B.Example.com' }).webauthn.rpId).toBe('b.example.com');
    expect(config({ IDP_BASE_URL: 'https://id.example.com', IDP_WEBAUTHN_RP_ID: 'id.example.com' }).webauthn.rpId).toBe('id.example.com');
  });

  it.each([
    ['https://id.example.com', 'other.example.com', 'must be the host of IDP_BASE_URL (id.example.com) or a parent domain of it'],
    ['https://id.example.com', 'com', 'must be a domain name, the host of IDP_BASE_URL (id.example.com) or a parent domain of it'],
    ['https://id.example.com', 'ample.com', 'must be the host of IDP_BASE_URL (id.example.com) or a parent domain of it'],
    ['https://id.example.com', 'https://example.com', 'must be a domain name, the host of IDP_BASE_URL (id.example.com) or a parent domain of it'],
    ['https://id.example.com', 'example.com:443', 'must be a domain name, the host of IDP_BASE_URL (id.example.com) or a parent domain of it'],
    ['http://10.0.0.5:3000', '0.0.5', 'must be 10.0.0.5 (the host of IDP_BASE_URL): an IP address has no parent domain'],
  ])('refuses %s with %s in one line naming the variable', (base, rpId, message) => {
    expect(rpIdProblem(new URL(base).hostname, rpId)).toBe(message);
    const result = parseConfig({ IDP_BASE_URL: base, IDP_WEBAUTHN_RP_ID: rpId });
    expect(result.ok).toBe(false);
    expect(!result.ok && result.message).toBe(`configuration error: IDP_WEBAUTHN_RP_ID ${message} (example: IDP_WEBAUTHN_RP_ID=example.com)`);
  });
});
