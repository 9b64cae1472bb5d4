/**
 * The eta pages, rendered as the routes render them (autoEscape on): hostile values come out
 * escaped everywhere, the names, labels and buttons of CONTRACT section 5 are there, and nothing
 * in them would need more than the strict Content-Security-Policy allows (no inline styles, no
 * inline scripts but form-post's nonce'd one, no external resources).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Eta } from 'eta';
import { describe, expect, it } from 'vitest';

const VIEWS = resolve(import.meta.dirname, '../../templates');
const eta = new Eta({ views: VIEWS, autoEscape: true });

const HOSTILE = `<script>alert(1)</script>"'&`;
const ESCAPED = '&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;';
const QR_SVG = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 21 21"><path d="M0 0h7v7H0z"/></svg>';

type Data = Record<string, unknown>;

/** Benign, complete data for every page (each also gets title and assetBase). */
const PAGES: Record<string, Data> = {
  'sign-in': { action: '/signin?step=1', csrfToken: 'csrf-1', clientName: 'Web shop', username: '', error: 'Wrong username or password.', notice: 'Your password was changed.' },
  consent: {
    action: '/consent', csrfToken: 'csrf-2', clientName: 'Web shop', userName: 'Alice Liddell',
    scopes: [{ name: 'openid', description: 'Know who you are' }, { name: 'email', description: 'See your email address' }],
  },
  error: { error: 'invalid_request', description: 'The redirect_uri is not registered for this client.', status: 400 },
  'signed-out': {},
  'logout-confirm': { action: '/connect/logout', csrfToken: 'csrf-3', fields: [{ name: 'state', value: 's-1' }, { name: 'post_logout_redirect_uri', value: 'https://shop.example/' }], clientName: 'Web shop' },
  'form-post': { action: 'https://shop.example/callback', fields: [{ name: 'code', value: 'c-1' }, { name: 'state', value: 's-1' }], nonce: 'bm9uY2U' },
  otp: { action: '/signin/otp', csrfToken: 'csrf-4', error: 'That code did not work.' },
  enrol: { action: '/signin/enrol', csrfToken: 'csrf-5', qrSvg: QR_SVG, secret: 'JBSWY3DPEHPK3PXP', error: 'That code did not work.' },
  password: { action: '/signin/password', csrfToken: 'csrf-6', error: 'The passwords do not match.' },
};

function render(page: string, data: Data, assetBase = '/idp'): string {
  return eta.render(page, { title: `Title of ${page}`, assetBase, ...data });
}

// --- a little HTML reading, enough for these pages ---------------------------------------------

function attrs(tag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of tag.matchAll(/\s([a-zA-Z_:][-\w:.]*)(?:\s*=\s*"([^"]*)")?/g)) out[m[1] ?? ''] = m[2] ?? '';
  return out;
}

const tags = (html: string, name: string) => [...html.matchAll(new RegExp(`<${name}\\b[^>]*>`, 'gi'))].map((m) => attrs(m[0].replace(/^<\w+/, '')));
const ENTITIES: Record<string, string> = { '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'", '&amp;': '&' };
const text = (fragment: string) =>
  fragment.replace(/<[^>]*>/g, ' ').replace(/&(lt|gt|quot|#39|amp);/g, (e) => ENTITIES[e] ?? e).replace(/\s+/g, ' ').trim();

function labels(html: string): Map<string, string> {
  return new Map([...html.matchAll(/<label\b([^>]*)>([\s\S]*?)<\/label>/gi)].map((m) => [attrs(m[1] ?? '').for ?? '', text(m[2] ?? '')]));
}

function buttons(html: string): Array<{ text: string; name?: string; value?: string; type?: string; class?: string }> {
  return [...html.matchAll(/<button\b([^>]*)>([\s\S]*?)<\/button>/gi)].map((m) => ({ ...attrs(m[1] ?? ''), text: text(m[2] ?? '') }));
}

function forms(html: string): Array<Record<string, string>> {
  return tags(html, 'form');
}

/** Every path to a string leaf of the data, so each can be made hostile on its own. */
function stringPaths(value: unknown, path: Array<string | number> = []): Array<Array<string | number>> {
  if (typeof value === 'string') return [path];
  if (Array.isArray(value)) return value.flatMap((v, i) => stringPaths(v, [...path, i]));
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => stringPaths(v, [...path, k]));
  return [];
}

function withValue(data: Data, path: Array<string | number>, value: string): Data {
  const copy = structuredClone(data);
  let node: Record<string | number, unknown> = copy;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  node[path[path.length - 1] ?? ''] = value;
  return copy;
}

// --- the tests ----------------------------------------------------------------------------------

describe('templates', () => {
  it('covers every page in templates/', () => {
    const files = readdirSync(VIEWS).filter((f) => f.endsWith('.eta')).map((f) => f.replace(/\.eta$/, ''));
    expect(files.filter((f) => f !== 'layout').sort()).toEqual(Object.keys(PAGES).sort());
  });

  describe.each(Object.keys(PAGES))('%s', (page) => {
    const data = PAGES[page] ?? {};
    // The error page titles itself after its heading; the QR code is trusted markup.
    const paths = stringPaths({ title: 'T', ...data }).filter((p) => p[0] !== 'qrSvg' && !(page === 'error' && p[0] === 'title'));

    it.each(paths.map((p) => [p.join('.'), p] as const))('escapes a hostile %s', (_name, path) => {
      const html = eta.render(page, withValue({ title: 'T', assetBase: '', ...data }, path, HOSTILE));
      expect(html).toContain(ESCAPED);
      expect(html).not.toContain('<script>alert');
      expect(html).not.toContain(`"'&`);
    });

    it('is a whole, accessible HTML document', () => {
      const html = render(page, data);
      expect(html).toMatch(/^<!doctype html>\s*<html lang="en">/i);
      expect(html.match(/<h1\b/g)).toHaveLength(1);
      expect(html).toMatch(/<meta name="viewport" content="width=device-width, initial-scale=1">/);
      expect(html).toMatch(/<title>[^<]+<\/title>/);
      // Every visible input has a label pointing at it.
      const labelled = labels(html);
      for (const input of tags(html, 'input').filter((i) => i.type !== 'hidden')) {
        expect(input.id, `input ${input.name}`).toBeTruthy();
        expect(labelled.has(input.id ?? ''), `label for ${input.id}`).toBe(true);
      }
      // At most one autofocus, and on a visible input.
      const focused = tags(html, 'input').filter((i) => 'autofocus' in i);
      expect(focused.length).toBeLessThanOrEqual(1);
      if (focused[0]) expect(focused[0].type).not.toBe('hidden');
    });

    it('needs nothing the Content-Security-Policy refuses', () => {
      const html = render(page, data);
      expect(html).not.toMatch(/\sstyle\s*=/i);
      expect(html).not.toMatch(/<style\b/i);
      expect(html).not.toMatch(/\son[a-z]+\s*=/i);
      expect(html).not.toMatch(/javascript:/i);
      const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)];
      if (page === 'form-post') {
        expect(scripts).toHaveLength(1);
        expect(attrs(scripts[0]?.[1] ?? '')).toEqual({ nonce: 'bm9uY2U' });
        expect(scripts[0]?.[2]).toBe('document.forms[0].submit()');
      } else {
        expect(html).not.toMatch(/<script\b/i);
      }
      // No external resources: no http(s) or protocol-relative URL anywhere but the client's
      // redirect URI (form-post's action) and the logout page's hidden field values.
      const resources = [...tags(html, 'link'), ...tags(html, 'img'), ...tags(html, 'script'), ...tags(html, 'iframe'), ...tags(html, 'source')];
      for (const r of resources) expect(r.href ?? r.src ?? '').not.toMatch(/^(https?:)?\/\//i);
      const withoutData = html
        .replace(/xmlns(:\w+)?="[^"]*"/g, '')
        .replace(/<input type="hidden"[^>]*>/g, '')
        .replace(/<form method="post" action="https:\/\/shop\.example\/callback">/, '');
      expect(withoutData).not.toMatch(/https?:\/\//i);
    });
  });

  it('links the one stylesheet under the asset base, except on the form-post page', () => {
    for (const page of Object.keys(PAGES)) {
      const links = tags(render(page, PAGES[page] ?? {}, '/idp'), 'link').filter((l) => l.rel === 'stylesheet');
      if (page === 'form-post') expect(links).toEqual([]);
      else expect(links).toEqual([{ rel: 'stylesheet', href: '/idp/assets/idp.css' }]);
    }
    const atRoot = tags(render('sign-in', PAGES['sign-in'] ?? {}, ''), 'link').filter((l) => l.rel === 'stylesheet');
    expect(atRoot).toEqual([{ rel: 'stylesheet', href: '/assets/idp.css' }]);
  });

  it('uses raw output only for the layout body and the server-made QR code', () => {
    for (const file of readdirSync(VIEWS).filter((f) => f.endsWith('.eta'))) {
      const source = readFileSync(join(VIEWS, file), 'utf8');
      const raw = [...source.matchAll(/<%~\s*([\s\S]*?)\s*%>/g)].map((m) => m[1]);
      const allowed = file === 'layout.eta' ? ['it.body'] : file === 'enrol.eta' ? ['it.qrSvg'] : [];
      expect(raw, file).toEqual(allowed);
    }
    expect(render('enrol', PAGES.enrol ?? {})).toContain(QR_SVG);
  });

  it('keeps the stylesheet self-contained', () => {
    const css = readFileSync(join(VIEWS, 'assets/idp.css'), 'utf8');
    expect(css).not.toMatch(/@import|@font-face/i);
    expect(css).not.toMatch(/url\(\s*['"]?(?!data:)/i);
    expect(css).not.toMatch(/https?:\/\//i);
  });
});

describe('the pages of CONTRACT section 5', () => {
  function formOf(html: string, action: string) {
    const all = forms(html);
    expect(all).toHaveLength(1);
    expect(all[0]).toMatchObject({ method: 'post', action });
    const hidden = tags(html, 'input').filter((i) => i.type === 'hidden');
    return { form: all[0] ?? {}, hidden, visible: tags(html, 'input').filter((i) => i.type !== 'hidden'), labels: labels(html), buttons: buttons(html) };
  }

  it('sign-in: username, password, "Sign in", the client name, CSRF, error tied to the form', () => {
    const data = PAGES['sign-in'] ?? {};
    const html = render('sign-in', data);
    const f = formOf(html, '/signin?step=1');
    expect(f.hidden).toEqual([{ type: 'hidden', name: 'csrf_token', value: 'csrf-1' }]);
    expect(f.visible.map((i) => [i.name, f.labels.get(i.id ?? ''), i.type, i.autocomplete])).toEqual([
      ['username', 'Username', 'text', 'username'],
      ['password', 'Password', 'password', 'current-password'],
    ]);
    expect(f.buttons).toEqual([{ class: 'button button-primary', type: 'submit', text: 'Sign in' }]);
    expect(text(html)).toContain('to continue to Web shop');
    expect(text(html)).toContain('Your password was changed.');
    const alert = tags(html, 'div').find((d) => d.role === 'alert');
    expect(alert?.id).toBeTruthy();
    expect(f.form['aria-describedby']).toBe(alert?.id);
    expect(html).toMatch(/role="alert"[^>]*>[\s\S]*Wrong username or password\./);
    // The first field has focus; with the username already filled in, the password does.
    expect(f.visible.find((i) => 'autofocus' in i)?.name).toBe('username');
    const again = formOf(render('sign-in', { ...data, username: 'alice' }), '/signin?step=1');
    expect(again.visible.map((i) => [i.name, i.value, 'autofocus' in i])).toEqual([['username', 'alice', false], ['password', undefined, true]]);
  });

  it('sign-in without an error or notice has no alert and no describedby', () => {
    const html = render('sign-in', { ...PAGES['sign-in'], error: undefined, notice: undefined });
    expect(html).not.toContain('role="alert"');
    expect(html).not.toContain('aria-describedby');
    expect(html).not.toContain('role="status"');
  });

  it('second factor: otp "Authentication code" and "Verify"', () => {
    const html = render('otp', PAGES.otp ?? {});
    const f = formOf(html, '/signin/otp');
    expect(f.hidden).toEqual([{ type: 'hidden', name: 'csrf_token', value: 'csrf-4' }]);
    expect(f.visible.map((i) => [i.name, f.labels.get(i.id ?? ''), i.inputmode, i.autocomplete, 'autofocus' in i])).toEqual([
      ['otp', 'Authentication code', 'numeric', 'one-time-code', true],
    ]);
    expect(f.buttons.map((b) => b.text)).toEqual(['Verify']);
    expect(f.form['aria-describedby']).toBe('form-error');
  });

  it('MFA enrolment: the QR code, the secret as text, otp and "Verify"', () => {
    const html = render('enrol', PAGES.enrol ?? {});
    const f = formOf(html, '/signin/enrol');
    expect(f.hidden.map((i) => i.name)).toEqual(['csrf_token']);
    expect(f.visible.map((i) => [i.name, f.labels.get(i.id ?? '')])).toEqual([['otp', 'Authentication code']]);
    expect(f.buttons.map((b) => b.text)).toEqual(['Verify']);
    expect(text(html)).toContain('JBSWY3DPEHPK3PXP');
    expect(html).toContain(QR_SVG);
  });

  it('password change: new_password, confirm_password and "Change password"', () => {
    const html = render('password', PAGES.password ?? {});
    const f = formOf(html, '/signin/password');
    expect(f.hidden.map((i) => i.name)).toEqual(['csrf_token']);
    expect(f.visible.map((i) => [i.name, f.labels.get(i.id ?? ''), i.type, i.autocomplete])).toEqual([
      ['new_password', 'New password', 'password', 'new-password'],
      ['confirm_password', 'Confirm password', 'password', 'new-password'],
    ]);
    expect(f.buttons.map((b) => b.text)).toEqual(['Change password']);
  });

  it('consent: the client, every scope, decision=allow "Allow" and decision=deny "Deny"', () => {
    const html = render('consent', PAGES.consent ?? {});
    const f = formOf(html, '/consent');
    expect(f.hidden).toEqual([{ type: 'hidden', name: 'csrf_token', value: 'csrf-2' }]);
    expect(f.visible).toEqual([]);
    expect(f.buttons.map((b) => [b.name, b.value, b.type, b.text])).toEqual([
      ['decision', 'allow', 'submit', 'Allow'],
      ['decision', 'deny', 'submit', 'Deny'],
    ]);
    expect(f.buttons[0]?.class).toContain('button-primary');
    expect(f.buttons[1]?.class).toContain('button-secondary');
    const words = text(html);
    expect(words).toContain('Web shop');
    expect(words).toContain('Alice Liddell');
    for (const s of ['Know who you are openid', 'See your email address email']) expect(words).toContain(s);
  });

  it('sign-out confirmation: "Sign out" with the CSRF token and every extra field', () => {
    const html = render('logout-confirm', PAGES['logout-confirm'] ?? {});
    const f = formOf(html, '/connect/logout');
    expect(f.hidden.map((i) => [i.name, i.value])).toEqual([
      ['csrf_token', 'csrf-3'], ['state', 's-1'], ['post_logout_redirect_uri', 'https://shop.example/'],
    ]);
    expect(f.buttons.map((b) => b.text)).toEqual(['Sign out']);
    expect(text(html)).toContain('Sign out?');
    expect(text(render('logout-confirm', { ...PAGES['logout-confirm'], clientName: undefined }))).not.toContain('undefined');
  });

  it('error: the code in the page text, a friendly heading by status', () => {
    const client = text(render('error', PAGES.error ?? {}));
    expect(client).toContain('Error code: invalid_request');
    expect(client).toContain("This request can't be completed");
    expect(client).toContain('The redirect_uri is not registered for this client.');
    const server = text(render('error', { error: 'server_error', description: 'Try again later.', status: 500 }));
    expect(server).toContain('Something went wrong');
    expect(server).toContain('Error code: server_error');
    expect(render('error', PAGES.error ?? {})).toContain("<title>This request can&#39;t be completed</title>");
  });

  it('signed out', () => {
    expect(text(render('signed-out', {}))).toContain('You have signed out');
  });

  it('form-post: a POST to the redirect URI with every field, a no-JS Continue button', () => {
    const html = render('form-post', PAGES['form-post'] ?? {});
    expect(forms(html)).toEqual([{ method: 'post', action: 'https://shop.example/callback' }]);
    expect(tags(html, 'input').map((i) => [i.type, i.name, i.value])).toEqual([['hidden', 'code', 'c-1'], ['hidden', 'state', 's-1']]);
    expect(buttons(html)).toEqual([{ type: 'submit', text: 'Continue' }]);
    expect(html).toMatch(/<noscript>[\s\S]*JavaScript[\s\S]*<\/noscript>/);
  });

  it('pages render without a title or asset base', () => {
    const html = eta.render('signed-out', {});
    expect(html).toContain('<title>Signed out</title>');
    expect(html).toContain('href="/assets/idp.css"');
    expect(html).not.toContain('undefined');
  });
});
