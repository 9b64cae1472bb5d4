/**
 * The client credentials grant without HTTP, table-driven on the real stores: which scopes a
 * client gets, and who may not use the grant.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TokenResponse } from '../../../src/grants/common.ts';
import { ISSUER, jwtPayload, openHarness, outcome, type Harness } from './grant-harness.ts';

describe('client credentials grant', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await openHarness();
  });
  afterAll(async () => {
    await h?.close();
  });

  describe('client credentials', () => {
    const cases: Array<{ scope: string | undefined; clientId?: string; method?: 'none'; expect: string }> = [
      { scope: 'orders.read', expect: 'orders.read' },
      { scope: 'orders.read orders.write', expect: 'orders.read orders.write' },
      { scope: undefined, expect: 'orders.read orders.write' },
      { scope: 'orders.read invoices.read', expect: 'invalid_scope' },
      { scope: 'openid', expect: 'invalid_scope' },
      { scope: 'orders.read', method: 'none', expect: 'unauthorized_client' },
      // The administration scopes: only when the client lists them, and only when asked for.
      { scope: 'admin_api', expect: 'invalid_scope' },
      { scope: 'admin_api', clientId: 'automation', expect: 'admin_api' },
      { scope: 'orders.read admin_api', clientId: 'automation', expect: 'orders.read admin_api' },
      { scope: undefined, clientId: 'automation', expect: 'orders.read' },
      { scope: 'admin_api_readonly', clientId: 'automation', expect: 'invalid_scope' },
    ];
    for (const c of cases) {
      it(`scope ${c.scope ?? '(none)'}${c.method ? ' by a public client' : ''} -> ${c.expect}`, async () => {
        let result: TokenResponse | undefined;
        const auth = { ...h.client(c.clientId ?? 'service'), ...(c.method ? { method: c.method } : {}) };
        const got = await outcome(h.grants.clientCredentials.handle(c.scope === undefined ? {} : { scope: c.scope }, auth, h.log).then((r) => (result = r)));
        if (['invalid_scope', 'unauthorized_client'].includes(c.expect)) {
          expect(got).toBe(c.expect);
          return;
        }
        expect(got).toBe('ok');
        expect(Object.keys(result ?? {}).sort()).toStrictEqual(['access_token', 'expires_in', 'scope', 'token_type']);
        expect(result?.scope).toBe(c.expect);
        const clientId = c.clientId ?? 'service';
        expect(jwtPayload(result?.access_token ?? '')).toMatchObject({ iss: ISSUER, sub: clientId, client_id: clientId, scope: c.expect });
      });
    }
  });
});
