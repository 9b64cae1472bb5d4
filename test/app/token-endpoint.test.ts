/**
 * POST /connect/token and /connect/userinfo, from outside the app running in this process, for the authorization code grant:
 * single-use codes (a replay also revokes what the first use issued), PKCE, redirect_uri and
 * client binding, client authentication (Basic with RFC 6749 §2.3.1 form-encoding), malformed
 * requests, and the userinfo endpoint's refusals.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ALICE, Browser, ENC_CLIENT_ID, ENC_SECRET, OTHER_SECRET, SPA_REDIRECT, WEB_REDIRECT, WEB_SECRET,
  authorizeThroughPages, basic, codeFrom, codeRequest, pkce, postForm, redeem, startSeededApp, userinfo,
  type HttpResponse, type Setup,
} from '../e2e/code-flow-support.ts';
import { waitUntil } from '../helpers/waits.ts';

/** A token endpoint error: status, code, a description, JSON, never cached. */
function expectTokenError(res: HttpResponse, status: number, code: string): void {
  expect(res.body.error, JSON.stringify(res.body)).toBe(code);
  expect(res.status).toBe(status);
  expect(typeof res.body.error_description).toBe('string');
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(res.headers.get('cache-control')).toMatch(/no-store/);
  expect(res.body).not.toHaveProperty('access_token');
}

describe('the token endpoint (authorization code grant) and userinfo', () => {
  let setup: Setup;
  let tokenUrl: string;
  /** Alice, signed in: the web and spa clients need no consent, so codes come without a page. */
  const browser = new Browser();

  beforeAll(async () => {
    setup = await startSeededApp();
    tokenUrl = `${setup.base}/connect/token`;
    codeFrom(await authorizeThroughPages(browser, setup.base, codeRequest(setup.base, 'web', WEB_REDIRECT, pkce().challenge), ALICE), WEB_REDIRECT, setup.issuer);
  });
  afterAll(async () => {
    await setup?.stop();
  });

  async function freshCode(clientId = 'web', redirectUri = WEB_REDIRECT, scope = 'openid profile') {
    const { verifier, challenge } = pkce();
    const page = await browser.get(codeRequest(setup.base, clientId, redirectUri, challenge, { scope }));
    return { code: codeFrom(page, redirectUri, setup.issuer), verifier };
  }

  const webAuth = { clientId: 'web', secret: WEB_SECRET };

  describe('codes', () => {
    it('refuses a second use of a code and revokes the access token of the first use', async () => {
      const { code, verifier } = await freshCode();
      const first = await redeem(setup.base, code, WEB_REDIRECT, verifier, webAuth);
      expect(first.status).toBe(200);
      const accessToken = String(first.body.access_token);
      expect((await userinfo(setup.base, accessToken)).status).toBe(200);

      expectTokenError(await redeem(setup.base, code, WEB_REDIRECT, verifier, webAuth), 400, 'invalid_grant');
      const after = await userinfo(setup.base, accessToken);
      expect(after.status).toBe(401);
      expect(after.headers.get('www-authenticate')).toMatch(/^Bearer /);
    });

    it('refuses a wrong code_verifier', async () => {
      const { code } = await freshCode();
      expectTokenError(await redeem(setup.base, code, WEB_REDIRECT, pkce().verifier, webAuth), 400, 'invalid_grant');
    });

    it('refuses a redirect_uri other than the one of the authorization request', async () => {
      const { code, verifier } = await freshCode();
      expectTokenError(await redeem(setup.base, code, 'https://rp.test/other', verifier, webAuth), 400, 'invalid_grant');
    });

    it('refuses a code issued to another client', async () => {
      const { code, verifier } = await freshCode();
      // `other` registered the same redirect URI and authenticates correctly.
      expectTokenError(await redeem(setup.base, code, WEB_REDIRECT, verifier, { clientId: 'other', secret: OTHER_SECRET }), 400, 'invalid_grant');
    });

    it('refuses an unknown code', async () => {
      expectTokenError(await redeem(setup.base, 'not-a-code', WEB_REDIRECT, pkce().verifier, webAuth), 400, 'invalid_grant');
    });

    it('requires the code_verifier (invalid_request), and the code is still good afterwards', async () => {
      const { code, verifier } = await freshCode();
      const res = await postForm(tokenUrl, { grant_type: 'authorization_code', code, redirect_uri: WEB_REDIRECT }, { authorization: basic('web', WEB_SECRET) });
      expectTokenError(res, 400, 'invalid_request');
      expect((await redeem(setup.base, code, WEB_REDIRECT, verifier, webAuth)).status).toBe(200);
    });

    it('redeems a public client\'s code with client_id alone', async () => {
      const { code, verifier } = await freshCode('spa', SPA_REDIRECT);
      const res = await redeem(setup.base, code, SPA_REDIRECT, verifier, { clientId: 'spa' });
      expect(res.status).toBe(200);
      expect(res.headers.get('cache-control')).toMatch(/no-store/);
    });
  });

  describe('client authentication and malformed requests', () => {
    it('answers a wrong secret with 401 invalid_client and a Basic challenge', async () => {
      const { code, verifier } = await freshCode();
      const res = await redeem(setup.base, code, WEB_REDIRECT, verifier, { clientId: 'web', secret: `${WEB_SECRET}x` });
      expectTokenError(res, 401, 'invalid_client');
      expect(res.headers.get('www-authenticate')).toMatch(/^Basic /);
    });

    it('form-decodes the Basic id and secret (RFC 6749 §2.3.1)', async () => {
      const encoded = await postForm(tokenUrl, { grant_type: 'client_credentials', scope: 'orders.read' }, { authorization: basic(ENC_CLIENT_ID, ENC_SECRET) });
      expect(encoded.status, JSON.stringify(encoded.body)).toBe(200);
      expect(encoded.body.scope).toBe('orders.read');
      // The same credentials without the form-encoding are not the registered ones.
      const raw = `Basic ${Buffer.from(`${ENC_CLIENT_ID}:${ENC_SECRET}`).toString('base64')}`;
      expectTokenError(await postForm(tokenUrl, { grant_type: 'client_credentials' }, { authorization: raw }), 401, 'invalid_client');
    });

    it('refuses Basic and client_secret in the body at once', async () => {
      const { code, verifier } = await freshCode();
      const res = await postForm(tokenUrl,
        { grant_type: 'authorization_code', code, redirect_uri: WEB_REDIRECT, code_verifier: verifier, client_id: 'web', client_secret: WEB_SECRET },
        { authorization: basic('web', WEB_SECRET) });
      expectTokenError(res, 400, 'invalid_request');
    });

    it('refuses a repeated parameter', async () => {
      const { code, verifier } = await freshCode();
      const body = new URLSearchParams([
        ['grant_type', 'authorization_code'], ['grant_type', 'authorization_code'],
        ['code', code], ['redirect_uri', WEB_REDIRECT], ['code_verifier', verifier],
      ]).toString();
      expectTokenError(await postForm(tokenUrl, body, { authorization: basic('web', WEB_SECRET) }), 400, 'invalid_request');
    });

    it('refuses a JSON body', async () => {
      const { code, verifier } = await freshCode();
      const res = await postForm(tokenUrl, JSON.stringify({ grant_type: 'authorization_code', code, redirect_uri: WEB_REDIRECT, code_verifier: verifier }),
        { authorization: basic('web', WEB_SECRET), 'content-type': 'application/json' });
      expectTokenError(res, 400, 'invalid_request');
      // Not consumed by the refused request.
      expect((await redeem(setup.base, code, WEB_REDIRECT, verifier, webAuth)).status).toBe(200);
    });

    it('refuses an unknown grant_type', async () => {
      expectTokenError(await postForm(tokenUrl, { grant_type: 'password', username: 'alice', password: ALICE.password }, { authorization: basic('web', WEB_SECRET) }), 400, 'unsupported_grant_type');
      expectTokenError(await postForm(tokenUrl, { grant_type: 'urn:ietf:params:oauth:grant-type:device_code' }, { authorization: basic('web', WEB_SECRET) }), 400, 'unsupported_grant_type');
    });

    it('keeps the client credentials grant from public clients', async () => {
      expectTokenError(await postForm(tokenUrl, { grant_type: 'client_credentials', client_id: 'spa' }), 400, 'unauthorized_client');
      // Nor can an administrator give a public client that grant.
      await expect(setup.sql(`UPDATE clients SET grant_types = grant_types || '{client_credentials}' WHERE client_id = 'spa'`)).rejects.toThrow(/client_credentials/);
    });
  });

  describe('userinfo', () => {
    it('answers a request without a token with 401 and an invalid_token Bearer challenge', async () => {
      const res = await userinfo(setup.base, undefined);
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer /);
      expect(res.headers.get('www-authenticate')).toContain('error="invalid_token"');
      expect(res.body).not.toHaveProperty('sub');
    });

    it('refuses a garbage token, a token signed by someone else and a client credentials token', async () => {
      for (const token of ['garbage', 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.']) {
        const res = await userinfo(setup.base, token);
        expect(res.status, token).toBe(401);
        expect(res.headers.get('www-authenticate')).toMatch(/^Bearer /);
      }
      const cc = await postForm(tokenUrl, { grant_type: 'client_credentials', scope: 'orders.read' }, { authorization: basic('other', OTHER_SECRET) });
      expect(cc.status).toBe(200);
      const res = await userinfo(setup.base, String(cc.body.access_token));
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer /);
      expect(res.body).not.toHaveProperty('sub');
    });

    it('answers POST like GET', async () => {
      const { code, verifier } = await freshCode('web', WEB_REDIRECT, 'openid profile email roles');
      const tokens = await redeem(setup.base, code, WEB_REDIRECT, verifier, webAuth);
      expect(tokens.status).toBe(200);
      const viaGet = await userinfo(setup.base, String(tokens.body.access_token), { method: 'GET' });
      const viaPost = await userinfo(setup.base, String(tokens.body.access_token), { method: 'POST' });
      expect(viaGet.status).toBe(200);
      expect(viaPost.status).toBe(200);
      expect(viaGet.body).toMatchObject({ email: 'alice@example.com', role: ['admin', 'buyer'], preferred_username: 'alice' });
      expect(viaPost.body).toStrictEqual(viaGet.body);
    });

    it('refuses, within a second of the SQL edit, a token whose client was disabled since it was issued', async () => {
      const { code, verifier } = await freshCode();
      const tokens = await redeem(setup.base, code, WEB_REDIRECT, verifier, webAuth);
      const accessToken = String(tokens.body.access_token);
      expect((await userinfo(setup.base, accessToken)).status).toBe(200);
      await setup.sql(`UPDATE clients SET enabled = false WHERE client_id = 'web'`);
      try {
        const refused = await waitUntil('the disabled client\'s token is refused', async () => {
          const res = await userinfo(setup.base, accessToken);
          return res.status === 401 ? res : undefined;
        }, { limitMs: 1000 });
        expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"');
        expect(refused.body).not.toHaveProperty('sub');
      } finally {
        await setup.sql(`UPDATE clients SET enabled = true WHERE client_id = 'web'`);
      }
      await waitUntil('the enabled client\'s token is accepted again', async () => (await userinfo(setup.base, accessToken)).status === 200, { limitMs: 1000 });
    });
  });
});
