/**
 * The eta pages, rendered as the routes render them (autoEscape on): hostile values come out
 * escaped everywhere, the names, labels and buttons of the README's Pages section are there, and nothing
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
/** A time as the account page shows it (sessions/account/readable-time.ts). */
const TIME = { iso: '2026-11-27T10:00:00.000Z', ago: '3 hours ago', exact: '2026-11-27 10:00 UTC' };
const ESCAPED = '&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;';
const QR_SVG = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 21 21"><path d="M0 0h7v7H0z"/></svg>';

type Data = Record<string, unknown>;

/** Benign, complete data for every page (each also gets assetBase); some carry a brand. */
const BRAND = { name: 'Acme Corp', hasLogo: true };
const PAGES: Record<string, Data> = {
  'sign-in': {
    action: '/signin?step=1', csrfToken: 'csrf-1', clientName: 'Web shop', username: '', error: 'Wrong username or password.', notice: 'Your password was changed.',
    invalid: ['username', 'password'], brand: BRAND, forgotPasswordUrl: '/account/recover?interaction=i-1',
  },
  recover: { action: '/account/recover', csrfToken: 'csrf-7', interaction: 'i-1' },
  'recover-code': { action: '/account/recover/code', csrfToken: 'csrf-8', recovery: 'r-1', code: '12345678', error: 'That code is not right.' },
  consent: {
    action: '/consent', csrfToken: 'csrf-2', clientName: 'Web shop', userName: 'Alice Liddell',
    scopes: [{ name: 'openid', description: 'Know who you are' }, { name: 'email', description: 'See your email address' }],
  },
  error: {
    error: 'invalid_request', description: 'The redirect_uri is not registered for this client.', status: 400, requestId: 'req-7f3a', brand: BRAND,
    heading: "This request can't be completed", message: 'The application that sent you here is not set up to sign in with this service.',
    link: { href: 'https://shop.example/', text: 'Return to the application' },
  },
  'signed-out': { applicationUrl: 'https://shop.example/', clientName: 'Web shop' },
  'logout-confirm': {
    action: '/connect/logout', csrfToken: 'csrf-3', fields: [{ name: 'state', value: 's-1' }, { name: 'post_logout_redirect_uri', value: 'https://shop.example/' }],
    clientName: 'Web shop', accountName: 'Alice Liddell (alice)',
  },
  'form-post': { action: 'https://shop.example/callback', fields: [{ name: 'code', value: 'c-1' }, { name: 'state', value: 's-1' }], nonce: 'bm9uY2U' },
  otp: { action: '/signin/otp', csrfToken: 'csrf-4', error: 'That code did not work.', invalid: ['otp'], recoveryUrl: '/signin/recovery' },
  recovery: { action: '/signin/recovery', csrfToken: 'csrf-7', error: 'That recovery code is not right.', invalid: ['recovery_code'], otpUrl: '/signin', otpLabel: 'Use your authenticator app instead' },
  'recovery-codes': { action: '/signin/recovery-codes', csrfToken: 'csrf-8', codes: ['k7xq-2mfp-9d', '0a1b-2c3d-4e'] },
  enrol: { action: '/signin/enrol', csrfToken: 'csrf-5', qrSvg: QR_SVG, secret: 'JBSW Y3DP EHPK 3PXP',
    otpauthUri: 'otpauth://totp/idp.example:alice?secret=JBSWY3DPEHPK3PXP&issuer=idp.example', account: 'alice', issuer: 'idp.example', error: 'That code did not work.', invalid: ['otp'],
    fields: [{ name: 'enrolment', value: 'sealed-1' }], cancelUrl: '/account' },
  account: {
    accountPath: '/account', csrfToken: 'csrf-7', username: 'alice', emailCode: '12345678',
    message: { section: 'password', kind: 'error', text: 'The current password is not right.', invalid: ['current_password'] },
    profile: [{ label: 'Name', claim: 'name', value: 'Alice Liddell' }, { label: 'Email', claim: 'email', value: 'alice@example.com' }],
    names: { givenName: 'Alice', familyName: 'Liddell' },
    email: 'alice@example.com', emailVerified: false, canChangePassword: true, factorsHere: true, recent: false,
    totp: { since: TIME, lastUsed: TIME }, recoveryCodes: { offered: true, left: 7, total: 10 }, rules: ['be at least 12 characters long'],
    invalid: ['password.current_password'],
    confirming: { action: 'access-remove', id: 'web' },
    passkeys: [{ id: 'pk-1', name: 'Laptop', since: TIME, lastUsed: null }],
    applications: [{ clientId: 'web', name: 'Web shop', since: TIME, lastUsed: TIME }],
    sessions: [
      { id: 's-1', device: 'Chrome on Linux', address: '192.0.2.1', signedIn: TIME, lastActive: TIME, methods: 'with password', current: true },
      { id: 's-2', device: 'Firefox on Android', address: '192.0.2.2', signedIn: TIME, lastActive: TIME, methods: 'with password', current: false },
    ],
    otherSessions: 1,
  },
  password: {
    action: '/signin/password', csrfToken: 'csrf-6', error: 'The passwords do not match.', invalid: ['confirm_password'],
    reason: 'Your administrator requires a new password.', rules: ['be at least 12 characters long', 'not contain your username'],
  },
};

function render(page: string, data: Data, assetBase = '/idp'): string {
  return eta.render(page, { assetBase, ...data });
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
    // Pages title themselves after their heading; the QR code is trusted markup; `invalid` and is never printed.
    // names fields and is never printed; nor are the account page's selectors (which section a
    // message is in, which action asks to confirm) nor the current session's id (no "Sign out").
    const selector = (p: Array<string | number>) => p.includes('invalid') || p[0] === 'confirming' || (p[0] === 'message' && p[1] !== 'text') || p.join('.') === 'sessions.0.id';
    const paths = stringPaths(data).filter((p) => p[0] !== 'qrSvg' && !selector(p));

    it.each(paths.map((p) => [p.join('.'), p] as const))('escapes a hostile %s', (_name, path) => {
      const html = eta.render(page, withValue({ assetBase: '', ...data }, path, HOSTILE));
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
      } else if (page === 'recovery-codes') {
        // "Copy codes", an enhancement: the service's own file, nothing inline.
        expect(scripts.map((m) => [attrs(m[1] ?? ''), m[2]])).toEqual([[{ src: '/idp/assets/recovery-codes.js', defer: '' }, '']]);
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
        .replace(/<form method="post" action="https:\/\/shop\.example\/callback">/, '')
        .replace(/<a class="button button-primary" href="https:\/\/shop\.example\/">/, '');
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
      // The passkey partial is a template too, escaped as every other: including it is no raw value.
      // So are the account page's partials, and its helpers that include them (messageIn, time).
      const partial = /^(include\('partials\/[\w-]+', [\s\S]*\)|messageIn\('\w+'\)|time\([\w.]+\))$/;
      const raw = [...source.matchAll(/<%~\s*([\s\S]*?)\s*%>/g)].map((m) => m[1]).filter((r) => !partial.test(r ?? ''));
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

describe('the pages, with the names of the README\'s Pages section', () => {
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
    const html = render('sign-in', { ...PAGES['sign-in'], error: undefined, notice: undefined, invalid: undefined });
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

  it('forgot password: identifier "Username or email" and "Send code"; the code form with code "Code" and "Continue"', () => {
    const html = render('recover', PAGES.recover ?? {});
    const f = formOf(html, '/account/recover');
    expect(f.hidden.map((i) => [i.name, i.value])).toEqual([['csrf_token', 'csrf-7'], ['interaction', 'i-1']]);
    expect(f.visible.map((i) => [i.name, f.labels.get(i.id ?? '')])).toEqual([['identifier', 'Username or email']]);
    expect(f.buttons.map((b) => b.text)).toEqual(['Send code']);
    const code = render('recover-code', PAGES['recover-code'] ?? {});
    const c = formOf(code, '/account/recover/code');
    expect(c.hidden.map((i) => [i.name, i.value])).toEqual([['csrf_token', 'csrf-8'], ['recovery', 'r-1']]);
    expect(c.visible.map((i) => [i.name, c.labels.get(i.id ?? ''), i.value, i.autocomplete])).toEqual([['code', 'Code', '12345678', 'one-time-code']]);
    expect(c.buttons.map((b) => b.text)).toEqual(['Continue']);
    // The sign-in page links it; without a link, nothing.
    expect(tags(render('sign-in', PAGES['sign-in'] ?? {}), 'a').map((a) => a.href)).toEqual(['/account/recover?interaction=i-1']);
    expect(render('sign-in', { ...PAGES['sign-in'], forgotPasswordUrl: undefined })).not.toContain('Forgot password');
    // A page that only says why there is no form.
    expect(forms(render('recover', { message: 'Start from the application.' }))).toEqual([]);
  });

  it('second factor: "Use a recovery code" leads to the recovery code form, only when there are codes', () => {
    expect(tags(render('otp', PAGES.otp ?? {}), 'a').map((a) => a.href)).toEqual(['/signin/recovery']);
    expect(text(render('otp', PAGES.otp ?? {}))).toContain('Use a recovery code');
    expect(tags(render('otp', { ...PAGES.otp, recoveryUrl: undefined }), 'a')).toEqual([]);
  });

  it('recovery code: recovery_code "Recovery code" and "Verify", the field in error pointing at the message', () => {
    const html = render('recovery', PAGES.recovery ?? {});
    const f = formOf(html, '/signin/recovery');
    expect(f.hidden).toEqual([{ type: 'hidden', name: 'csrf_token', value: 'csrf-7' }]);
    expect(f.visible.map((i) => [i.name, f.labels.get(i.id ?? ''), i.autocomplete, i['aria-invalid'], i['aria-describedby']])).toEqual([
      ['recovery_code', 'Recovery code', 'off', 'true', 'form-error'],
    ]);
    expect(f.buttons.map((b) => b.text)).toEqual(['Verify']);
    expect(tags(html, 'a').map((a) => a.href)).toEqual(['/signin']);
    expect(text(html)).toContain('Use your authenticator app instead');
    expect(text(render('recovery', { ...PAGES.recovery, otpLabel: 'Use a passkey instead' }))).toContain('Use a passkey instead');
  });

  it('new recovery codes: each code as text, and "Continue"', () => {
    const html = render('recovery-codes', PAGES['recovery-codes'] ?? {});
    const f = formOf(html, '/signin/recovery-codes');
    expect(f.hidden).toEqual([{ type: 'hidden', name: 'csrf_token', value: 'csrf-8' }]);
    expect(f.visible).toEqual([]);
    // "Copy codes" is hidden until the page's script shows it.
    expect(f.buttons.map((b) => b.text)).toEqual(['Copy codes', 'Continue']);
    expect(html).toMatch(/<a [^>]*href="data:text\/plain;charset=utf-8,[^"]*k7xq-2mfp-9d[^"]*" download="recovery-codes.txt">Download as a text file<\/a>/);
    expect(text(html)).toContain('k7xq-2mfp-9d');
    expect(text(html)).toContain('0a1b-2c3d-4e');
  });

  it('second factor with a passkey: "Use a passkey", the options escaped into the form, the one served script', () => {
    const options = JSON.stringify({ challenge: 'abc', rpId: HOSTILE });
    const passkey = { mode: 'get', action: '/signin/otp/passkey', options };
    const html = render('otp', { ...PAGES.otp, passkey });
    const form = forms(html).find((f) => f.action === '/signin/otp/passkey');
    expect(form).toMatchObject({ method: 'post', 'data-passkey': 'get' });
    expect(form?.['data-options']).toBe(options.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;'));
    expect(html).not.toContain('<script>alert');
    expect(tags(html, 'input').filter((i) => i.type === 'hidden').map((i) => i.name)).toEqual(['csrf_token', 'csrf_token', 'passkey_response']);
    expect(buttons(html).map((b) => b.text)).toEqual(['Verify', 'Use a passkey']);
    expect([...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)].map((m) => [attrs(m[1] ?? ''), m[2]])).toEqual([[{ src: '/idp/assets/passkeys.js', defer: '' }, '']]);
    // With a passkey and no authenticator app, the passkey is the one way on.
    const only = render('otp', { ...PAGES.otp, passkey, passkeyOnly: true });
    expect(tags(only, 'input').find((i) => i.name === 'otp')).toBeUndefined();
    expect(buttons(only)).toEqual([expect.objectContaining({ text: 'Use a passkey', class: 'button button-primary' })]);
    expect(tags(only, 'a').map((a) => a.href)).toEqual(['/signin/recovery']);
    const enrol = render('enrol', { ...PAGES.enrol, passkey: { mode: 'create', action: '/signin/enrol/passkey', options } });
    expect(buttons(enrol).map((b) => b.text)).toEqual(['Verify', 'Set up a passkey']);
    const named = render('enrol', { ...PAGES.enrol, passkey: { mode: 'create', action: '/account/passkeys', options, named: true } });
    expect(buttons(named).map((b) => b.text)).toEqual(['Verify', 'Add a passkey']);
    expect(labels(named).get('passkey_name')).toBe('Name of the passkey');
  });

  it('MFA enrolment: the QR code, the secret as text, otp and "Verify"', () => {
    const html = render('enrol', PAGES.enrol ?? {});
    const f = formOf(html, '/signin/enrol');
    // The account page's set-up adds its sealed secret as `fields`.
    expect(f.hidden.map((i) => i.name)).toEqual(['csrf_token', 'enrolment']);
    expect(f.visible.map((i) => [i.name, f.labels.get(i.id ?? '')])).toEqual([['otp', 'Authentication code']]);
    expect(f.buttons.map((b) => b.text)).toEqual(['Verify']);
    expect(text(html)).toContain('JBSW Y3DP EHPK 3PXP');
    expect(tags(html, 'a').map((a) => a.href)).toContain('otpauth://totp/idp.example:alice?secret=JBSWY3DPEHPK3PXP&amp;issuer=idp.example');
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
    // "Sign out" comes first (Enter submits it); Cancel sends cancel=1 with the same token.
    expect(f.buttons.map((b) => [b.text, b.name, b.value])).toEqual([['Sign out', undefined, undefined], ['Cancel', 'cancel', '1']]);
    expect(text(html)).toContain('Sign out?');
    expect(text(html)).toContain('You are signed in as Alice Liddell (alice)');
    expect(text(render('logout-confirm', { ...PAGES['logout-confirm'], clientName: undefined, accountName: undefined }))).not.toContain('undefined');
  });

  it('error: the request id to quote, the code in the page text, a friendly heading by status', () => {
    const client = text(render('error', PAGES.error ?? {}));
    expect(client).toContain('Reference: req-7f3a');
    expect(client).toContain('give them the reference');
    expect(client).not.toMatch(/mention the error code/i);
    expect(client).toContain('Error code: invalid_request');
    expect(client).toContain("This request can't be completed");
    expect(client).toContain('The redirect_uri is not registered for this client.');
    // Plain words first, and the way back when the route knows one.
    expect(client).toContain('The application that sent you here is not set up to sign in with this service.');
    expect(tags(render('error', PAGES.error ?? {}), 'a').map((a) => a.href)).toEqual(['https://shop.example/']);
    const server = text(render('error', { error: 'server_error', description: 'Try again later.', status: 500, requestId: 'r-1' }));
    expect(server).toContain('Something went wrong');
    expect(server).toContain('Error code: server_error');
    expect(render('error', { ...PAGES.error, brand: undefined })).toContain("<title>This request can&#39;t be completed</title>");
  });

  it('signed out: a link back to the application when one is known', () => {
    const html = render('signed-out', PAGES['signed-out'] ?? {});
    expect(text(html)).toContain('You have signed out');
    expect(tags(html, 'a')).toEqual([{ class: 'button button-primary', href: 'https://shop.example/' }]);
    expect(html).toMatch(/<a [^>]*>Return to Web shop<\/a>/);
    // Without an application to return to (signed out from the account page): the way back in.
    const unknown = render('signed-out', {});
    expect(tags(unknown, 'a')).toEqual([{ class: 'button button-secondary', href: '/idp/account' }]);
    expect(text(unknown)).toContain('You can now close this window, or sign in again.');
    expect(text(render('signed-out', { ...PAGES['signed-out'], stillSignedIn: true }))).toContain('You are still signed in');
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
    expect(html).toContain('<title>You have signed out</title>');
    expect(html).toContain('href="/assets/idp.css"');
    expect(html).not.toContain('undefined');
  });
});

describe('what the pages tell people', () => {
  const h1 = (html: string) => text(/<h1\b[^>]*>([\s\S]*?)<\/h1>/.exec(html)?.[1] ?? '');
  const title = (html: string) => text(/<title>([\s\S]*?)<\/title>/.exec(html)?.[1] ?? '');

  it.each(Object.keys(PAGES).filter((p) => p !== 'form-post'))('%s: the title is the heading (and the brand)', (page) => {
    const html = render(page, { ...PAGES[page], brand: undefined });
    expect(title(html)).toBe(h1(html));
    const branded = render(page, { ...PAGES[page], brand: BRAND });
    expect(title(branded)).toBe(`${h1(branded)} – Acme Corp`);
  });

  it('shows the brand name and the served logo on every page, or the default mark', () => {
    for (const page of Object.keys(PAGES).filter((p) => p !== 'form-post')) {
      const html = render(page, { ...PAGES[page], brand: BRAND }, '/idp');
      expect(tags(html, 'img'), page).toEqual([{ class: 'brand-logo', src: '/idp/assets/brand-logo', alt: '', height: '40' }]);
      expect(html, page).toContain('<span class="brand-name">Acme Corp</span>');
      expect(html, page).not.toContain('brand-mark');
      const plain = render(page, { ...PAGES[page], brand: undefined });
      expect(tags(plain, 'img'), page).toEqual([]);
      expect(plain, page).toContain('class="brand-mark"');
      expect(plain, page).not.toContain('brand-name');
    }
    const nameOnly = render('sign-in', { ...PAGES['sign-in'], brand: { name: 'Acme Corp', hasLogo: false } });
    expect(nameOnly).toContain('class="brand-mark"');
    expect(nameOnly).toContain('<span class="brand-name">Acme Corp</span>');
  });

  it('sign-in: both fields in error point at the message; none without an error', () => {
    const f = tags(render('sign-in', PAGES['sign-in'] ?? {}), 'input').filter((i) => i.type !== 'hidden');
    expect(f.map((i) => [i.name, i['aria-invalid'], i['aria-describedby']])).toEqual([
      ['username', 'true', 'form-error'], ['password', 'true', 'form-error'],
    ]);
    const clean = tags(render('sign-in', { ...PAGES['sign-in'], error: undefined, invalid: undefined }), 'input');
    expect(clean.some((i) => 'aria-invalid' in i)).toBe(false);
  });

  it('second factor and enrolment: the code field in error points at the message', () => {
    for (const page of ['otp', 'enrol']) {
      const otp = tags(render(page, PAGES[page] ?? {}), 'input').find((i) => i.name === 'otp');
      expect(otp?.['aria-invalid'], page).toBe('true');
      expect(otp?.['aria-describedby'], page).toBe('form-error');
      const clean = tags(render(page, { ...PAGES[page], error: undefined, invalid: undefined }), 'input').find((i) => i.name === 'otp');
      expect(clean && 'aria-invalid' in clean, page).toBe(false);
    }
  });

  it('enrolment: the QR code is one image with a text alternative', () => {
    const qr = tags(render('enrol', PAGES.enrol ?? {}), 'div').find((d) => d.class === 'qr');
    expect(qr?.role).toBe('img');
    expect(qr?.['aria-label']).toMatch(/QR code .*authenticator app.*key below/);
  });

  it('password change: the reason and the rules before the first try, the field in error marked', () => {
    const first = render('password', { ...PAGES.password, error: undefined, invalid: undefined });
    expect(text(first)).toContain('Your administrator requires a new password.');
    expect(text(first)).toContain('Your new password must: be at least 12 characters long not contain your username');
    expect(first).not.toContain('role="alert"');
    const fields = (html: string) => tags(html, 'input').filter((i) => i.type === 'password').map((i) => [i.name, i['aria-invalid'], i['aria-describedby']]);
    expect(fields(first)).toEqual([['new_password', undefined, 'password-rules'], ['confirm_password', undefined, undefined]]);
    expect(tags(first, 'div').some((d) => d.id === 'password-rules')).toBe(true);
    expect(fields(render('password', PAGES.password ?? {}))).toEqual([
      ['new_password', undefined, 'password-rules'], ['confirm_password', 'true', 'form-error'],
    ]);
    expect(fields(render('password', { ...PAGES.password, invalid: ['new_password'] }))).toEqual([
      ['new_password', 'true', 'form-error password-rules'], ['confirm_password', undefined, undefined],
    ]);
  });
});
