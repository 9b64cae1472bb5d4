/**
 * The token endpoint's grant pipeline below HTTP (createGrants): grant_type required, a grant
 * this service has (unsupported_grant_type), one the client may use (unauthorized_client), then
 * the grant's own parameters (invalid_request naming the parameter). Exact descriptions: the
 * e2e suites assert them on the wire.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OAuthError } from '../../../src/errors.ts';
import { createGrants, type Grants } from '../../../src/grants/index.ts';
import { openHarness, type Harness } from './grant-harness.ts';

interface PipelineCase {
  name: string;
  clientId: string;
  params: Record<string, string>;
  code: string;
  description: string;
}

const cases: PipelineCase[] = [
  { name: 'no grant_type', clientId: 'web', params: {}, code: 'invalid_request', description: 'The grant_type parameter is required.' },
  { name: 'an unknown grant_type', clientId: 'web', params: { grant_type: 'password' }, code: 'unsupported_grant_type', description: 'The grant type is not supported.' },
  {
    name: 'a grant the client may not use',
    clientId: 'service',
    params: { grant_type: 'authorization_code', code: 'x', redirect_uri: 'x', code_verifier: 'x' },
    code: 'unauthorized_client',
    description: 'The client may not use this grant type.',
  },
  {
    name: 'the client check comes before the grant\'s parameters',
    clientId: 'service',
    params: { grant_type: 'refresh_token' },
    code: 'unauthorized_client',
    description: 'The client may not use this grant type.',
  },
  { name: 'a missing code', clientId: 'web', params: { grant_type: 'authorization_code' }, code: 'invalid_request', description: 'The code parameter is required.' },
  {
    name: 'a missing code_verifier',
    clientId: 'web',
    params: { grant_type: 'authorization_code', code: 'x', redirect_uri: 'x' },
    code: 'invalid_request',
    description: 'The code_verifier parameter is required.',
  },
  { name: 'a missing refresh_token', clientId: 'web', params: { grant_type: 'refresh_token' }, code: 'invalid_request', description: 'The refresh_token parameter is required.' },
  { name: 'an unknown code', clientId: 'web', params: { grant_type: 'authorization_code', code: 'x', redirect_uri: 'x', code_verifier: 'x' }, code: 'invalid_grant', description: 'The authorization code is invalid, expired or already used.' },
];

describe('grant pipeline', () => {
  let h: Harness;
  let grants: Grants;
  beforeAll(async () => {
    h = await openHarness();
    grants = createGrants(h.deps);
  });
  afterAll(async () => {
    await h?.close();
  });

  for (const c of cases) {
    it(`${c.name} -> ${c.code}`, async () => {
      const error = await grants.issue(c.params, h.client(c.clientId), h.log).then(() => undefined, (e: unknown) => e);
      expect(error).toBeInstanceOf(OAuthError);
      expect({ code: (error as OAuthError).code, description: (error as OAuthError).description }).toStrictEqual({ code: c.code, description: c.description });
    });
  }

  it('issues through the grant the grant_type names', async () => {
    const response = await grants.issue({ grant_type: 'client_credentials', scope: 'orders.read' }, h.client('service'), h.log);
    expect(response.scope).toBe('orders.read');
    expect(h.audit.at(-1)).toMatchObject({ event: 'token_issued', fields: { grant: 'client_credentials', client_id: 'service' } });
  });
});
