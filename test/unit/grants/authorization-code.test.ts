/**
 * The authorization code grant without HTTP, table-driven, on the real stores with the injected
 * clock: a code lives 5 minutes and is single use (RFC 6749 §4.1.2).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OAuthErrorCode } from '../../../src/errors.ts';
import type { CodeRecord } from '../../../src/store/records.ts';
import type { TokenResponse } from '../../../src/grants/common.ts';
import { REDIRECT, issueCode, jwtPayload, openHarness, outcome, pkce, type Harness } from './grant-harness.ts';

interface Issued {
  code: string;
  verifier: string;
}

interface CodeCase {
  name: string;
  /** Seconds between issuing the code and redeeming it. */
  delay: number;
  clientId?: string;
  redirectUri?: string;
  verifier?(issued: Issued): string;
  expect: 'ok' | OAuthErrorCode;
}

const cases: CodeCase[] = [
  { name: 'redeems a fresh code', delay: 0, expect: 'ok' },
  { name: 'redeems a code 299 seconds old', delay: 299, expect: 'ok' },
  { name: 'refuses a code 301 seconds old (5 minutes elapsed: expired)', delay: 301, expect: 'invalid_grant' },
  { name: 'refuses a code an hour old', delay: 3600, expect: 'invalid_grant' },
  { name: 'refuses another client\'s code', delay: 0, clientId: 'other', expect: 'invalid_grant' },
  { name: 'refuses a redirect_uri other than the authorization request\'s', delay: 0, redirectUri: 'https://rp.example/other', expect: 'invalid_grant' },
  { name: 'refuses a wrong code_verifier', delay: 0, verifier: () => pkce().verifier, expect: 'invalid_grant' },
];

describe('authorization code grant', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await openHarness();
  });
  afterAll(async () => {
    await h?.close();
  });

  async function issue(scopes = ['openid', 'offline_access']): Promise<Issued> {
    const { verifier, challenge } = pkce();
    const record: CodeRecord = {
      userId: h.user.id, scopes, authTime: Math.floor(h.now() / 1000), amr: ['pwd'], allowedScopes: scopes,
      clientId: 'web', redirectUri: REDIRECT, codeChallenge: challenge,
    };
    return { code: await issueCode(h.ephemeral, record), verifier };
  }

  const redeem = (issued: Issued, clientId = 'web', redirectUri = REDIRECT, verifier = issued.verifier): Promise<TokenResponse> =>
    h.grants.code.handle({ code: issued.code, redirect_uri: redirectUri, code_verifier: verifier }, h.client(clientId), h.log);

  for (const c of cases) {
    it(c.name, async () => {
      const issued = await issue();
      h.advance(c.delay);
      let result: TokenResponse | undefined;
      const got = await outcome(redeem(issued, c.clientId, c.redirectUri, c.verifier?.(issued)).then((r) => (result = r)));
      expect(got).toBe(c.expect);
      if (c.expect === 'ok') {
        const access = jwtPayload(result?.access_token ?? '');
        expect(access.iat).toBe(Math.floor(h.now() / 1000));
        expect(access.exp).toBe(Math.floor(h.now() / 1000) + 600);
      }
    });
  }

  it('starts a refresh family ending one absolute lifetime after the exchange', async () => {
    const issued = await issue();
    const tokens = await redeem(issued);
    const state = await h.refreshState(tokens.refresh_token ?? '');
    expect(state?.current).toBe(true);
    expect(state?.family.generation).toBe(0);
    expect(state?.family.expiresAt.getTime()).toBe(h.now() + 4 * 3600 * 1000);
    expect(state?.family.tokenExpiresAt.getTime()).toBe(h.now() + 3600 * 1000);
    expect(state?.family.clientId).toBe('web');
    expect(state?.family.userId).toBe(h.user.id);
  });

  it('refuses a second use and revokes what the first use issued', async () => {
    const issued = await issue();
    const first = await redeem(issued);
    h.advance(5);
    expect(await outcome(redeem(issued))).toBe('invalid_grant');
    expect(await h.isRevoked(first.access_token)).toBe(true);
    const state = await h.refreshState(first.refresh_token ?? '');
    expect(state?.family.revokedAt).not.toBeNull();
    expect(await outcome(h.refresh(first.refresh_token ?? ''))).toBe('invalid_grant');
    expect(h.audit.some((e) => e.event === 'code_reuse_detected')).toBe(true);
  });
});
