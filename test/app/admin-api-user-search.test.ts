/**
 * Finding users through the administration API, in process: by the start of a username, email,
 * given or family name (case aside), by exact email, in username order a page at a time with a
 * count; a single resource's GET with a current If-None-Match (304); a username changed by PATCH
 * (the sub stays); and a GET's wrong query named as such.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_SECRET, adminChanges, call, isProblem, startAdminApp, tokenFor, type AdminSetup, type Answer } from '../e2e/admin-api-support.ts';

interface UserItem { sub: string; username: string; email: string | null }

describe('administration API: finding users', () => {
  let s: AdminSetup;
  let token: string;
  const url = (path: string) => `${s.api}${path}`;
  const names = (answer: Answer) => (answer.body.items as UserItem[]).map((u) => u.username);

  beforeAll(async () => {
    s = await startAdminApp({ LOG_LEVEL: 'info' });
    token = await tokenFor(s.base, 'automation', ADMIN_SECRET, 'admin_api');
    // Through SQL, as an administrator may: a directory account keeps the case of its name.
    await s.sql(`INSERT INTO users (id, subject, username, given_name, family_name, email) VALUES
      ('u1', 'u1', 'bob', 'Robert', 'Marley', 'rob@example.com'),
      ('u2', 'u2', 'carol', 'Carol', 'Robinson', 'CAROL@Example.com'),
      ('u3', 'u3', 'dave', 'Dave', 'Jones', 'dave@example.org'),
      ('u4', 'u4', 'robin', 'Robin', 'Hood', null)`);
    await s.sql("INSERT INTO users (id, source, subject, username, email) VALUES ('u5', 'ldap', 'u5', 'Roberta', 'roberta@corp.example')");
  });
  afterAll(async () => {
    await s?.stop();
  });

  it('finds users by the start of a username, email, given or family name, case aside, in username order', async () => {
    const found = await call(url('/users?q=ROB'), 'GET', { token });
    expect(found.status).toBe(200);
    // bob (email rob@, given name Robert), carol (family name Robinson), Roberta (ldap), robin.
    expect(names(found)).toEqual(['bob', 'carol', 'Roberta', 'robin']);
    expect(names(await call(url('/users?q=jon'), 'GET', { token }))).toEqual(['dave']);
    expect(names(await call(url('/users?q=dave%40example.o'), 'GET', { token }))).toEqual(['dave']);
    expect((await call(url('/users?q=zz'), 'GET', { token })).body).toEqual({ items: [], next_cursor: null });
    // Not the middle of a name.
    expect(names(await call(url('/users?q=arley'), 'GET', { token }))).toEqual([]);
    expect(names(await call(url('/users?q='), 'GET', { token }))).toEqual(['alice', 'bob', 'carol', 'dave', 'Roberta', 'robin']);
  });

  it('finds users by their exact email, case aside', async () => {
    expect(names(await call(url('/users?email=carol%40example.COM'), 'GET', { token }))).toEqual(['carol']);
    expect(names(await call(url('/users?email=carol%40example'), 'GET', { token }))).toEqual([]);
    expect(names(await call(url(`/users?email=${encodeURIComponent('a\u0000@b')}`), 'GET', { token }))).toEqual([]);
    expect(names(await call(url('/users?email=rob%40example.com&q=bo'), 'GET', { token }))).toEqual(['bob']);
  });

  it('pages a search by username with a cursor and the Link header; count=true adds the total of every page', async () => {
    const first = await call(url('/users?q=r&limit=3&count=true'), 'GET', { token });
    expect(first.body).toMatchObject({ total: 4, next_cursor: expect.any(String) });
    expect(names(first)).toEqual(['bob', 'carol', 'Roberta']);
    const link = /^<([^>]+)>; rel="next"$/.exec(first.headers.get('link') ?? '')?.[1] ?? '';
    expect(new URL(link, s.base).searchParams.get('q')).toBe('r');
    const second = await call(`${s.base}${link}`, 'GET', { token });
    expect(second.body).toMatchObject({ next_cursor: null });
    expect(second.body.total).toBeUndefined();
    expect(names(second)).toEqual(['robin']);
    // The cursor of a page that ended on a match by email (bob) starts the username branch at "ro".
    const fromBob = await call(url('/users?q=ro&limit=1'), 'GET', { token });
    expect(names(fromBob)).toEqual(['bob']);
    expect(names(await call(url(`/users?q=ro&limit=5&cursor=${fromBob.body.next_cursor}`), 'GET', { token }))).toEqual(['carol', 'Roberta', 'robin']);
    expect((await call(url('/users?count=true&limit=1'), 'GET', { token })).body.total).toBe(6);
    expect((await call(url('/users?email=ROB%40example.com&count=true'), 'GET', { token })).body.total).toBe(1);
    for (const list of ['/clients', '/api-scopes', '/keys', '/webhooks']) {
      const counted = await call(url(`${list}?count=true&limit=1`), 'GET', { token });
      expect(counted.status, list).toBe(200);
      expect(typeof counted.body.total, list).toBe('number');
    }
    expect((await call(url('/clients?count=true'), 'GET', { token })).body.total).toBe(6);
    expect(isProblem(await call(url('/users?cursor=bm90LW91cnM'), 'GET', { token }), 400)).toBe(true);
  });

  it('names an unknown or wrong query parameter without speaking of changes', async () => {
    const unknown = await call(url('/users?mail=bob%40example.com'), 'GET', { token });
    expect(isProblem(unknown, 400)).toBe(true);
    expect(unknown.body.detail).toBe('The query has a wrong parameter: mail: unknown parameter.');
    expect(unknown.body.errors).toEqual([{ parameter: 'mail', detail: 'unknown parameter' }]);
    const two = await call(url('/clients?limit=0&count=maybe'), 'GET', { token });
    expect(two.body.detail).toMatch(/^The query has 2 wrong parameters: limit: .+; count: .+\.$/);
    expect(two.body.detail).not.toMatch(/changed/);
  });

  it('answers 304 to a GET whose If-None-Match is current, 200 once the resource changed', async () => {
    for (const path of ['/users/u1', '/clients/web', '/api-scopes/orders.read']) {
      const read = await call(url(path), 'GET', { token });
      const etag = read.headers.get('etag') as string;
      const again = await call(url(path), 'GET', { token, headers: { 'if-none-match': etag } });
      expect(again.status, path).toBe(304);
      expect(again.body, path).toBeUndefined();
      expect(again.headers.get('etag'), path).toBe(etag);
      expect((await call(url(path), 'GET', { token, headers: { 'if-none-match': `W/"0", ${etag}` } })).status, path).toBe(304);
      expect((await call(url(path), 'GET', { token, headers: { 'if-none-match': '"0"' } })).status, path).toBe(200);
    }
    const before = (await call(url('/users/u1'), 'GET', { token })).headers.get('etag') as string;
    await s.sql("UPDATE users SET given_name = 'Bobby' WHERE id = 'u1'");
    const after = await call(url('/users/u1'), 'GET', { token, headers: { 'if-none-match': before } });
    expect(after.status).toBe(200);
    expect(after.body.given_name).toBe('Bobby');
  });

  it('changes a username with PATCH: the sub stays, the canonical form is stored, a taken name is 409', async () => {
    const read = await call(url('/users/u3'), 'GET', { token });
    const renamed = await call(url('/users/u3'), 'PATCH', { token, body: { username: '  David ' }, headers: { 'if-match': read.headers.get('etag') as string } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ sub: 'u3', username: 'david' });
    expect(adminChanges(s.logs())).toContainEqual(expect.objectContaining({ action: 'update', resource: 'user', resource_id: 'u3', fields: ['username'] }));
    expect(names(await call(url('/users?username=DAVID'), 'GET', { token }))).toEqual(['david']);
    const etag = renamed.headers.get('etag') as string;
    const taken = await call(url('/users/u3'), 'PATCH', { token, body: { username: 'BOB' }, headers: { 'if-match': etag } });
    expect(isProblem(taken, 409)).toBe(true);
    expect(taken.body.detail).toBe('user bob already exists');
    expect(isProblem(await call(url('/users/u3'), 'PATCH', { token, body: { username: ' ' }, headers: { 'if-match': etag } }), 400)).toBe(true);
    const ldap = await call(url('/users/u5'), 'GET', { token });
    const refused = await call(url('/users/u5'), 'PATCH', { token, body: { username: 'rob' }, headers: { 'if-match': ldap.headers.get('etag') as string } });
    expect(isProblem(refused, 400)).toBe(true);
    expect(refused.body.errors).toEqual([{ pointer: '/username', detail: 'not a local account' }]);
    expect((await s.sql("SELECT username FROM users WHERE id = 'u3'"))[0]?.username).toBe('david');
  });
});
