/**
 * Client credentials, introspection (RFC 7662) and revocation (RFC 7009) without HTTP,
 * table-driven on the real stores with the injected clock: which tokens are active to whom,
 * and what a revocation takes with it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientCredentialsGrant } from '../../../src/grants/client-credentials.ts';
import type { TokenResponse } from '../../../src/grants/common.ts';
import { introspect } from '../../../src/grants/introspection.ts';
import { revoke } from '../../../src/grants/revocation.ts';
import { ISSUER, jwtPayload, openHarness, outcome, type Harness } from './grant-harness.ts';

describe('client credentials, introspection and revocation', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await openHarness({ refreshLifetime: { idleSeconds: 3600, absoluteSeconds: 4 * 3600 }, graceSeconds: 10 });
  });
  afterAll(async () => {
    await h?.close();
  });

  const client = (id: string) => h.client(id).client;
  const active = async (token: string, clientId = 'web', hint?: string) => (await introspect(token, hint, client(clientId), h.deps)).active;

  describe('client credentials', () => {
    const cases: Array<{ scope: string | undefined; clientId?: string; method?: 'none'; expect: string }> = [
      { scope: 'orders.read', expect: 'orders.read' },
      { scope: 'orders.read orders.write', expect: 'orders.read orders.write' },
      { scope: undefined, expect: 'orders.read orders.write' },
      { scope: 'orders.read invoices.read', expect: 'invalid_scope' },
      { scope: 'openid', expect: 'invalid_scope' },
      { scope: 'orders.read', method: 'none', expect: 'unauthorized_client' },
    ];
    for (const c of cases) {
      it(`scope ${c.scope ?? '(none)'}${c.method ? ' by a public client' : ''} -> ${c.expect}`, async () => {
        let result: TokenResponse | undefined;
        const auth = { ...h.client(c.clientId ?? 'service'), ...(c.method ? { method: c.method } : {}) };
        const got = await outcome(clientCredentialsGrant.handle(c.scope === undefined ? {} : { scope: c.scope }, auth, h.deps).then((r) => (result = r)));
        if (!c.expect.includes('.')) {
          expect(got).toBe(c.expect);
          return;
        }
        expect(got).toBe('ok');
        expect(Object.keys(result ?? {}).sort()).toStrictEqual(['access_token', 'expires_in', 'scope', 'token_type']);
        expect(result?.scope).toBe(c.expect);
        expect(jwtPayload(result?.access_token ?? '')).toMatchObject({ iss: ISSUER, sub: 'service', client_id: 'service', name: 'Order service', scope: c.expect });
      });
    }
  });

  describe('introspection', () => {
    it('describes an active access token and refresh token to their client with exactly the members of interface.md', async () => {
      const t = await h.signIn();
      const access = jwtPayload(t.access_token);
      expect(await introspect(t.access_token, undefined, client('web'), h.deps)).toStrictEqual({
        active: true, iss: ISSUER, sub: h.user.subject, client_id: 'web', scope: t.scope, token_type: 'Bearer', iat: access.iat, exp: access.exp,
      });
      const refresh = await introspect(t.refresh_token, 'refresh_token', client('web'), h.deps);
      expect(refresh).toStrictEqual({
        active: true, iss: ISSUER, sub: h.user.subject, client_id: 'web', scope: t.scope, token_type: 'Bearer',
        iat: expect.any(Number), exp: Math.floor(h.now() / 1000) + 3600,
      });
    });

    // Each: a situation, then whether introspection by `web` reports the token active.
    const table: Array<{ name: string; make(): Promise<string>; active: boolean }> = [
      { name: 'an access token a second before it expires', active: true, async make() { const t = await h.signIn(); h.advance(599); return t.access_token; } },
      { name: 'an access token a second after it expires', active: false, async make() { const t = await h.signIn(); h.advance(601); return t.access_token; } },
      { name: 'a refresh token a second before its idle expiry', active: true, async make() { const t = await h.signIn(); h.advance(3599); return t.refresh_token; } },
      { name: 'a refresh token a second after its idle expiry', active: false, async make() { const t = await h.signIn(); h.advance(3601); return t.refresh_token; } },
      { name: 'a rotated-out refresh token (even within the grace window)', active: false, async make() { const t = await h.signIn(); await h.refresh(t.refresh_token); return t.refresh_token; } },
      { name: 'another client\'s access token', active: false, async make() { return (await h.signIn({ clientId: 'other' })).access_token; } },
      { name: 'another client\'s refresh token', active: false, async make() { return (await h.signIn({ clientId: 'other' })).refresh_token; } },
      { name: 'an unknown token', active: false, async make() { return 'z'.repeat(43); } },
    ];
    for (const row of table) {
      it(`${row.active ? 'reports' : 'does not report'} ${row.name} as active`, async () => {
        const token = await row.make();
        const result = await introspect(token, undefined, client('web'), h.deps);
        if (row.active) expect(result.active).toBe(true);
        else expect(result).toStrictEqual({ active: false });
      });
    }
  });

  describe('revocation', () => {
    it('revokes a refresh token\'s family and every access token issued from it', async () => {
      const t = await h.signIn();
      const second = await h.refresh(t.refresh_token);
      await revoke(second.refresh_token ?? '', 'refresh_token', client('web'), h.deps);
      expect(await active(second.refresh_token ?? '')).toBe(false);
      expect(await active(second.access_token)).toBe(false);
      expect(await active(t.access_token)).toBe(false);
      expect(await outcome(h.refresh(second.refresh_token ?? ''))).toBe('invalid_grant');
      expect(h.audit.at(-1)).toMatchObject({ event: 'token_revoked', fields: { kind: 'refresh_token', client_id: 'web' } });
    });

    it('revokes an access token alone', async () => {
      const t = await h.signIn();
      await revoke(t.access_token, undefined, client('web'), h.deps);
      expect(await active(t.access_token)).toBe(false);
    });

    it('revokes nothing for another client, or for an unknown token', async () => {
      const t = await h.signIn();
      const before = h.audit.length;
      await revoke(t.refresh_token, 'refresh_token', client('other'), h.deps);
      await revoke(t.access_token, 'access_token', client('other'), h.deps);
      await revoke('unknown-token', undefined, client('web'), h.deps);
      expect(h.audit.slice(before).filter((e) => e.event === 'token_revoked')).toHaveLength(0);
      expect(await active(t.access_token)).toBe(true);
      expect(await active(t.refresh_token)).toBe(true);
      expect(await outcome(h.refresh(t.refresh_token))).toBe('ok');
    });
  });
});
