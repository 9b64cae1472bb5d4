/**
 * The directory source in process against a real slapd (test/helpers/slapd.ts) and the embedded
 * database in memory: names, passwords, filter injection, claims, the local record following
 * the directory, disabled and deleted accounts, TLS, and a directory that stops or hangs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LdapConfig } from '../../../src/config.ts';
import { OAuthError } from '../../../src/errors.ts';
import { createLdapSource, type LdapSource } from '../../../src/sources/ldap.ts';
import type { SignInResult } from '../../../src/sources/types.ts';
import { openMigratedEmbedded } from '../../helpers/embedded-database.ts';
import type { UserRecord } from '../../../src/store/records.ts';
import type { DurableStore } from '../../../src/store/types.ts';
import { freePort } from '../../helpers/process.ts';
import { DIRECTORY_USERS as U, PEOPLE_DN, READER, slapdAvailable, startSlapd, type Slapd } from '../../helpers/slapd.ts';

const INVALID = { ok: false, reason: 'invalid_credentials' };
const TIMEOUTS = { connectTimeoutMs: 500, operationTimeoutMs: 1000 };

describe.runIf(slapdAvailable)('LDAP sign-in source against slapd', () => {
  let slapd: Slapd;
  let durable: DurableStore;
  let source: LdapSource;
  const logged: string[] = [];

  function makeSource(change: Partial<LdapConfig> = {}): LdapSource {
    const config: LdapConfig = {
      url: slapd.url, bindDn: READER.dn, bindPassword: READER.password, baseDn: PEOPLE_DN,
      userFilter: '(|(uid={username})(sAMAccountName={username}))', roleAttribute: 'memberOf', startTls: false, caFile: undefined, ...change,
    };
    return createLdapSource(config, durable.users, { ...TIMEOUTS, logger: { warn: (details: object, message: string) => void logged.push(`${message} ${JSON.stringify(details)}`) } as never });
  }

  async function signedIn(result: Promise<SignInResult>): Promise<UserRecord> {
    const r = await result;
    if (!r.ok) throw new Error(`expected a sign-in, got ${r.reason}`);
    expect(r.amr).toStrictEqual(['pwd']);
    return r.user;
  }

  beforeAll(async () => {
    slapd = await startSlapd();
    durable = await openMigratedEmbedded();
    source = makeSource();
  });

  afterAll(async () => {
    await durable?.close();
    await slapd?.close();
  });

  it('signs in by user, DOMAIN\\user and user@domain as one user whose sub is the account name in lower case', async () => {
    const forms = ['Bob.Smith', 'EXAMPLE\\Bob.Smith', 'bob.smith@example.test', 'BOB.SMITH'];
    const users = await Promise.all(forms.map((name) => signedIn(source.signIn(name, U.bob.password))));
    expect(new Set(users.map((u) => u.id)).size).toBe(1);
    expect(users[0]).toMatchObject({ source: 'ldap', subject: 'bob.smith', username: 'bob.smith', passwordHash: null, roles: ['Staff'] });
  });

  it('maps the directory attributes to claims and group CNs to roles', async () => {
    expect(await signedIn(source.signIn('alice', U.alice.password))).toMatchObject({
      subject: 'alice', givenName: 'Alice', familyName: 'Liddell', name: 'Alice Liddell', email: 'alice@example.test',
      emailVerified: false, phoneNumber: '+1 555 0100', roles: ['Admins', 'Staff'], locked: false, factors: [],
    });
    // Active Directory style: sAMAccountName, and a group whose CN holds an escaped comma.
    expect(await signedIn(source.signIn('CORP\\CWhite', U.carol.password))).toMatchObject({ subject: 'cwhite', name: 'Carol White', roles: ['Sales, EMEA'] });
  });

  it('gives a wrong password and an unknown user the same answer, and refuses an empty password without asking the directory', async () => {
    expect(await source.signIn('alice', 'not the password')).toStrictEqual(INVALID);
    expect(await source.signIn('nobody', U.alice.password)).toStrictEqual(INVALID);
    expect(await source.signIn('alice', '')).toStrictEqual(INVALID);
    // Nothing listens there: any contact with a directory would be 'unavailable'.
    const nowhere = makeSource({ url: `ldap://127.0.0.1:${await freePort()}` });
    expect(await nowhere.signIn('alice', '')).toStrictEqual(INVALID);
    expect(await nowhere.signIn('alice', 'x')).toStrictEqual({ ok: false, reason: 'unavailable' });
  });

  it('never lets filter syntax in the name sign anyone in', async () => {
    const names = ['*', 'bob*', 'alic*', 'Bob.Smit*', '*)(uid=*', 'admin)(|(uid=*', 'alice)(uid=alice', 'alice\0'];
    for (const name of names) {
      for (const password of [U.alice.password, U.bob.password]) expect(await source.signIn(name, password), name).toStrictEqual(INVALID);
    }
    // Under alice's own entry an unescaped `*` would find exactly her.
    expect(await makeSource({ baseDn: U.alice.dn }).signIn('*', U.alice.password)).toStrictEqual(INVALID);
  });

  it('keeps the local record in step with the directory, and keeps its flags and MFA enrolment', async () => {
    const first = await signedIn(source.signIn('alice', U.alice.password));
    expect((await signedIn(source.signIn('alice', U.alice.password))).updatedAt).toStrictEqual(first.updatedAt);
    await durable.users.update(first.id, { mustEnrolMfa: true, emailVerified: true });
    const totp = await durable.factors.add({ userId: first.id, kind: 'totp', name: 'Authenticator app', secretSealed: 'sealed-totp' });
    await slapd.modify(`dn: ${U.alice.dn}\nchangetype: modify\nreplace: mail\nmail: alice@new.example.test\n\n`
      + `dn: cn=Sales\\, EMEA,ou=groups,dc=example,dc=test\nchangetype: modify\nadd: member\nmember: ${U.alice.dn}\n\n`
      + `dn: cn=Admins,ou=groups,dc=example,dc=test\nchangetype: modify\nreplace: member\nmember: ${U.bob.dn}\n`);
    const refreshed = await source.currentUser(first);
    expect(refreshed).toMatchObject({
      id: first.id, email: 'alice@new.example.test', emailVerified: false, roles: ['Sales, EMEA', 'Staff'],
      factors: [totp], mustEnrolMfa: true, locked: false,
    });
    expect(await durable.users.getById(first.id)).toStrictEqual(refreshed);
  });

  it('refuses an account locked here, but only to someone who knows the password', async () => {
    const bob = await signedIn(source.signIn('bob.smith', U.bob.password));
    await durable.users.update(bob.id, { locked: true });
    expect(await source.signIn('bob.smith', U.bob.password)).toStrictEqual({ ok: false, reason: 'locked' });
    expect(await source.signIn('bob.smith', 'wrong')).toStrictEqual(INVALID);
    await durable.users.update(bob.id, { locked: false });
    await signedIn(source.signIn('bob.smith', U.bob.password));
  });

  it('refuses a disabled Active Directory account (userAccountControl 0x2), and currentUser no longer finds it', async () => {
    expect(await source.signIn('dave', U.dave.password)).toStrictEqual({ ok: false, reason: 'locked' });
    expect(await source.signIn('dave', 'wrong')).toStrictEqual(INVALID);
    expect(await durable.users.getBySubject('ldap', 'dave')).toBeUndefined();
    const carol = await signedIn(source.signIn('CWhite', U.carol.password));
    await slapd.modify(`dn: ${U.carol.dn}\nchangetype: modify\nreplace: userAccountControl\nuserAccountControl: 514\n`);
    expect(await source.currentUser(carol)).toBeUndefined();
    expect(await source.signIn('CWhite', U.carol.password)).toStrictEqual({ ok: false, reason: 'locked' });
    await slapd.modify(`dn: ${U.carol.dn}\nchangetype: modify\nreplace: userAccountControl\nuserAccountControl: 512\n`);
    expect(await source.currentUser(carol)).toMatchObject({ id: carol.id, subject: 'cwhite' });
  });

  it('answers undefined for an account deleted from the directory', async () => {
    const dn = `uid=erin,${PEOPLE_DN}`;
    await slapd.modify(`dn: ${dn}\nchangetype: add\nobjectClass: inetOrgPerson\nuid: erin\ncn: Erin\nsn: Erin\nuserPassword: erin-directory-password\n`);
    const erin = await signedIn(source.signIn('erin', 'erin-directory-password'));
    await slapd.modify(`dn: ${dn}\nchangetype: delete\n`);
    expect(await source.currentUser(erin)).toBeUndefined();
    expect(await source.signIn('erin', 'erin-directory-password')).toStrictEqual(INVALID);
  });

  it('is unavailable when the service account cannot bind', async () => {
    const misconfigured = makeSource({ bindPassword: 'wrong service password' });
    expect(await misconfigured.signIn('alice', U.alice.password)).toStrictEqual({ ok: false, reason: 'unavailable' });
    await expect(misconfigured.ping()).rejects.toThrow();
    await expect(source.ping()).resolves.toBeUndefined();
  });

  it('speaks StartTLS and ldaps:// with the configured CA, and refuses a certificate it cannot verify', async () => {
    const user = { subject: 'bob.smith' };
    await expect(signedIn(makeSource({ startTls: true, caFile: slapd.caFile }).signIn('bob.smith', U.bob.password))).resolves.toMatchObject(user);
    await expect(signedIn(makeSource({ url: slapd.ldapsUrl, caFile: slapd.caFile }).signIn('bob.smith', U.bob.password))).resolves.toMatchObject(user);
    expect(await makeSource({ url: slapd.ldapsUrl }).signIn('bob.smith', U.bob.password)).toStrictEqual({ ok: false, reason: 'unavailable' });
    expect(await makeSource({ startTls: true }).signIn('bob.smith', U.bob.password)).toStrictEqual({ ok: false, reason: 'unavailable' });
    expect(() => makeSource({ caFile: '/nonexistent/ca.pem' })).toThrow(/IDP_LDAP_CA_FILE \/nonexistent\/ca.pem cannot be read/);
  });

  it.each(['stopped', 'hung'] as const)('is unavailable within the timeouts while the directory is %s, then works again', async (state) => {
    const alice = await signedIn(source.signIn('alice', U.alice.password));
    if (state === 'stopped') await slapd.stop();
    else await slapd.pause();
    try {
      const started = Date.now();
      expect(await source.signIn('alice', U.alice.password)).toStrictEqual({ ok: false, reason: 'unavailable' });
      expect(Date.now() - started).toBeLessThan(TIMEOUTS.connectTimeoutMs + TIMEOUTS.operationTimeoutMs + 500);
      await expect(source.currentUser(alice)).rejects.toSatisfy((e) => e instanceof OAuthError && e.code === 'temporarily_unavailable');
      await expect(source.ping()).rejects.toThrow();
    } finally {
      if (state === 'stopped') await slapd.start();
      else slapd.resume();
    }
    await signedIn(source.signIn('alice', U.alice.password));
    await expect(source.ping()).resolves.toBeUndefined();
  });

  it('never logs a password', () => {
    expect(logged.some((line) => line.startsWith('directory unavailable'))).toBe(true);
    const passwords = [READER.password, ...Object.values(U).map((u) => u.password), 'wrong service password'];
    expect(logged.filter((line) => passwords.some((p) => line.includes(p)))).toStrictEqual([]);
  });
});
