/**
 * Introspection (RFC 7662) and revocation (RFC 7009) without HTTP, table-driven on the real
 * stores with the injected clock: which tokens are active to whom, and what a revocation takes
 * with it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { introspect } from '../../../src/protocol/introspection.ts';
import { revoke } from '../../../src/protocol/revocation.ts';
import { ISSUER, jwtPayload, openHarness, outcome, type Harness } from '../grants/grant-harness.ts';

describe('introspection and revocation', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await openHarness({ refreshLifetime: { idleSeconds: 3600, absoluteSeconds: 4 * 3600 }, graceSeconds: 10 });
  });
  afterAll(async () => {
    await h?.close();
  });

  const client = (id: string) => h.client(id).client;
  const request = (token: string, hint?: string) => ({ token, ...(hint !== undefined ? { token_type_hint: hint } : {}) });
  const inspect = (token: string, hint?: string, clientId = 'web') => introspect(request(token, hint), h.client(clientId), h.deps, h.log);
  const active = async (token: string, clientId = 'web', hint?: string) => (await inspect(token, hint, clientId)).active;
  const revokeAs = (clientId: string, token: string, hint?: string) => revoke(request(token, hint), client(clientId), h.deps, h.log);

  describe('requests', () => {
    const cases: Array<{ name: string; call(): Promise<unknown>; expect: string }> = [
      { name: 'introspection by a public client', call: () => introspect({ token: 'x' }, { ...h.client('web'), method: 'none' }, h.deps, h.log), expect: 'invalid_client' },
      { name: 'introspection without a token', call: () => introspect({}, h.client('web'), h.deps, h.log), expect: 'invalid_request' },
      { name: 'revocation without a token', call: () => revoke({}, client('web'), h.deps, h.log), expect: 'invalid_request' },
    ];
    for (const c of cases) {
      it(`${c.name} -> ${c.expect}`, async () => {
        expect(await outcome(c.call())).toBe(c.expect);
      });
    }

    it('audits a public client\'s introspection as a failed client authentication', async () => {
      await outcome(introspect({ token: 'x' }, { ...h.client('web'), method: 'none' }, h.deps, h.log));
      expect(h.audit.at(-1)).toStrictEqual({ event: 'client_authentication_failed', fields: { reason: 'public_client', client_id: 'web' } });
    });
  });

  describe('introspection', () => {
    it('describes an active access token and refresh token to their client with exactly the members RFC 7662 §2.2 names', async () => {
      const t = await h.signIn();
      const access = jwtPayload(t.access_token);
      expect(await inspect(t.access_token)).toStrictEqual({
        active: true, iss: ISSUER, sub: h.user.subject, client_id: 'web', scope: t.scope, token_type: 'Bearer', iat: access.iat, exp: access.exp,
      });
      const refresh = await inspect(t.refresh_token, 'refresh_token');
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
        const result = await inspect(token);
        if (row.active) expect(result.active).toBe(true);
        else expect(result).toStrictEqual({ active: false });
      });
    }
  });

  describe('revocation', () => {
    it('revokes a refresh token\'s family and every access token issued from it', async () => {
      const t = await h.signIn();
      const second = await h.refresh(t.refresh_token);
      await revokeAs('web', second.refresh_token ?? '', 'refresh_token');
      expect(await active(second.refresh_token ?? '')).toBe(false);
      expect(await active(second.access_token)).toBe(false);
      expect(await active(t.access_token)).toBe(false);
      expect(await outcome(h.refresh(second.refresh_token ?? ''))).toBe('invalid_grant');
      expect(h.audit.at(-1)).toMatchObject({ event: 'token_revoked', fields: { kind: 'refresh_token', client_id: 'web' } });
    });

    it('revokes an access token alone', async () => {
      const t = await h.signIn();
      await revokeAs('web', t.access_token);
      expect(await active(t.access_token)).toBe(false);
    });

    it('revokes nothing for another client, or for an unknown token', async () => {
      const t = await h.signIn();
      const before = h.audit.length;
      await revokeAs('other', t.refresh_token, 'refresh_token');
      await revokeAs('other', t.access_token, 'access_token');
      await revokeAs('web', 'unknown-token');
      expect(h.audit.slice(before).filter((e) => e.event === 'token_revoked')).toHaveLength(0);
      expect(await active(t.access_token)).toBe(true);
      expect(await active(t.refresh_token)).toBe(true);
      expect(await outcome(h.refresh(t.refresh_token))).toBe('ok');
    });
  });
});
