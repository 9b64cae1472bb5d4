/**
 * Where the console is served: wherever the administration API is, unless IDP_ADMIN_CONSOLE=off
 * (404, and its built-in client is unknown to the authorization endpoint); IDP_ADMIN_API=off turns
 * both off. And what every answer of the console carries, a redirect or a refusal included.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { Browser } from '../helpers/browser-http.ts';
import { startInProcess, type InProcessApp } from '../helpers/in-process.ts';

const apps: InProcessApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

async function started(env: Record<string, string>): Promise<InProcessApp> {
  const app = await startInProcess({ env });
  apps.push(app);
  return app;
}

const authorizeConsole = (base: string) => `${base}/connect/authorize?${new URLSearchParams({
  client_id: 'idp-admin-console', redirect_uri: `${base}/admin/callback`, response_type: 'code', scope: 'openid',
  code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256',
})}`;

describe('console switches', () => {
  it('answers 404 with IDP_ADMIN_CONSOLE=off, and its client is then unknown', async () => {
    const app = await started({ IDP_ADMIN_CONSOLE: 'off' });
    const browser = new Browser();
    expect((await browser.get(`${app.base}/admin`)).status).toBe(404);
    expect((await browser.get(`${app.base}/admin/clients`)).status).toBe(404);
    const authorize = await browser.get(authorizeConsole(app.base));
    expect(authorize.status).toBe(400);
    expect(authorize.body).toContain('invalid_request');
    // The API stays.
    expect((await browser.get(`${app.base}/admin/v1/openapi.json`)).status).toBe(200);
  });

  it('answers 404 with IDP_ADMIN_API=off', async () => {
    const app = await started({ IDP_ADMIN_API: 'off' });
    expect((await new Browser().get(`${app.base}/admin`)).status).toBe(404);
  });

  it('marks every answer no-store, unframeable, without inline script: the sign-in redirect, a failed callback, a refused form', async () => {
    const app = await started({});
    const browser = new Browser();
    const answers = [
      await browser.get(`${app.base}/admin`),
      await browser.get(`${app.base}/admin/callback?code=x&state=y`),
      await browser.post(`${app.base}/admin/clients`, { client_id: 'x' }),
      await browser.get(`${app.base}/admin/users`),
    ];
    expect(answers.map((a) => a.status)).toStrictEqual([303, 400, 303, 303]);
    for (const answer of answers) {
      expect(answer.headers.get('cache-control')).toBe('no-store');
      const csp = answer.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).toMatch(/script-src 'self'(;|$)/);
      expect(csp).not.toContain('unsafe-inline');
    }
    expect(answers[0]?.location).toContain('/connect/authorize?');
    expect(answers[0]?.location).toContain('code_challenge_method=S256');
    expect(answers[1]?.body).toContain('role="alert"');
  });
});
