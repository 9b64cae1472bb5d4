/** The pure half of the directory source: names, filters, group DNs, entries; and its configuration. */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config.ts';
import { canonicalAccountName, nameWithoutDomain, escapeFilterValue, groupNameOf, readAccount, userFilter } from '../../../src/sources/ldap-entry.ts';

describe('escapeFilterValue (RFC 4515 §3)', () => {
  it.each([
    ['*', '\\2a'],
    ['(', '\\28'],
    [')', '\\29'],
    ['\\', '\\5c'],
    ['\0', '\\00'],
    ['*)(uid=*', '\\2a\\29\\28uid=\\2a'],
    ['admin)(|(uid=*', 'admin\\29\\28|\\28uid=\\2a'],
    ['Bob.Smith', 'Bob.Smith'],
    ['Jürgen', 'Jürgen'],
  ])('%j -> %j', (value, escaped) => {
    expect(escapeFilterValue(value)).toBe(escaped);
  });

  it('replaces every {username} and keeps replacement patterns literal', () => {
    expect(userFilter('(|(uid={username})(sAMAccountName={username}))', 'a*')).toBe('(|(uid=a\\2a)(sAMAccountName=a\\2a))');
    expect(userFilter('(uid={username})', "$&$'")).toBe("(uid=$&$')");
  });
});

describe('nameWithoutDomain', () => {
  it.each([
    ['alice', 'alice'],
    ['  Bob.Smith ', 'Bob.Smith'],
    ['EXAMPLE\\Bob.Smith', 'Bob.Smith'],
    ['Bob.Smith@example.test', 'Bob.Smith'],
    ['EXAMPLE\\bob@example.test', 'bob'],
  ])('%j -> %j', (typed, name) => {
    expect(nameWithoutDomain(typed)).toBe(name);
  });

  it.each(['', '   ', 'EXAMPLE\\', '@example.test', 'x'.repeat(257)])('refuses %j', (typed) => {
    expect(nameWithoutDomain(typed)).toBeUndefined();
  });
});

describe('canonicalAccountName (one name per directory account, RFC 4518 preparation)', () => {
  it.each([
    'alice', 'ALICE', ' Alice ', 'EXAMPLE\\alice', 'x\\alice', 'alice@any', 'EXAMPLE\\ALICE@example.test',
    'al\u00ADice', 'ali\u200Bce', 'ａｌｉｃｅ',
  ])('%j -> alice', (typed) => {
    expect(canonicalAccountName(typed)).toBe('alice');
  });

  it.each([
    ['Bob  Smith', 'bob smith'],
    ['Bob\tSmith', 'bob smith'],
    ['Bob\u00A0Smith', 'bob smith'],
    ['Straße', 'strasse'],
    ['Jürgen', 'jürgen'],
    ['Ju\u0308rgen', 'jürgen'],
  ])('%j -> %j', (typed, key) => {
    expect(canonicalAccountName(typed)).toBe(key);
  });

  it('keeps different accounts apart, and names with nothing usable as they are', () => {
    expect(canonicalAccountName('alice')).not.toBe(canonicalAccountName('alice2'));
    expect(canonicalAccountName('EXAMPLE\\')).toBe('example\\');
  });
});

describe('groupNameOf', () => {
  it.each([
    ['cn=Admins,ou=groups,dc=example,dc=test', 'Admins'],
    ['CN=Domain Users,CN=Users,DC=corp,DC=example', 'Domain Users'],
    ['cn=Sales\\2C EMEA,ou=groups,dc=example,dc=test', 'Sales, EMEA'],
    ['cn=Sales\\, EMEA,ou=groups,dc=example,dc=test', 'Sales, EMEA'],
    ['cn=Caf\\C3\\A9,ou=groups', 'Café'],
    ['buyer', 'buyer'],
  ])('%j -> %j', (value, name) => {
    expect(groupNameOf(value)).toBe(name);
  });
});

describe('readAccount', () => {
  const entry = {
    dn: 'uid=Bob.Smith,ou=people,dc=example,dc=test',
    uid: ['bob', 'Bob.Smith'],
    givenName: 'Bob', sn: 'Smith', displayName: 'Bob Smith', mail: 'bob@example.test', telephoneNumber: [],
    memberOf: ['cn=Staff,ou=groups', 'cn=Admins,ou=groups', 'CN=Staff,OU=other'],
  };

  it('maps the attributes, names the groups by CN and lowercases the matched account name', () => {
    expect(readAccount(entry, 'BOB.SMITH', 'memberOf')).toStrictEqual({
      dn: entry.dn, subject: 'bob.smith', givenName: 'Bob', familyName: 'Smith', name: 'Bob Smith',
      email: 'bob@example.test', phoneNumber: null, roles: ['Admins', 'Staff'], disabled: false,
    });
  });

  it('reads the ACCOUNTDISABLE bit of userAccountControl', () => {
    expect(readAccount({ dn: 'cn=x', sAMAccountName: 'X', userAccountControl: '514' }, 'x', 'memberOf').disabled).toBe(true);
    expect(readAccount({ dn: 'cn=x', sAMAccountName: 'X', userAccountControl: '512' }, 'x', 'memberOf').disabled).toBe(false);
    expect(readAccount({ dn: 'cn=x', sAMAccountName: 'X', userAccountControl: '66050' }, 'x', 'memberOf').disabled).toBe(true);
  });

  it('drops a profile value or role holding a control character or a bidi override', () => {
    const hostile = { dn: 'cn=x', uid: 'x', givenName: 'X\u001b[2J', sn: 'Y', displayName: 'Z\u202Eevil', mail: 'x@example.test', memberOf: ['cn=Ok', 'cn=Bad\u0007'] };
    expect(readAccount(hostile, 'x', 'memberOf')).toMatchObject({ givenName: null, familyName: 'Y', name: null, email: 'x@example.test', roles: ['Ok'] });
  });

  it('drops a mail attribute that is more than a bare address: it would send the user\'s mail elsewhere', () => {
    for (const mail of ['<attacker@evil.example>bob', 'Bob <bob@example.test>', 'bob@example.test, attacker@evil.example']) {
      expect(readAccount({ dn: 'cn=b', uid: 'bob', mail }, 'bob', 'memberOf').email, mail).toBeNull();
    }
  });

  it('takes roles from the configured attribute, in any letter case', () => {
    expect(readAccount({ dn: 'cn=x', uid: 'x', employeeType: ['buyer', 'admin'] }, 'x', 'EMPLOYEETYPE').roles).toStrictEqual(['admin', 'buyer']);
  });
});

describe('LDAP configuration', () => {
  const base = { IDP_SIGN_IN_SOURCE: 'ldap', IDP_LDAP_URL: 'ldap://dc1.corp.example', IDP_LDAP_BASE_DN: 'dc=corp,dc=example' };

  it('reads StartTLS and the CA file', () => {
    const parsed = parseConfig({ ...base, IDP_LDAP_STARTTLS: '1', IDP_LDAP_CA_FILE: '/etc/ssl/corp-ca.pem' });
    expect(parsed.ok && parsed.config.signIn.source === 'ldap' && parsed.config.signIn.ldap).toMatchObject({ startTls: true, caFile: '/etc/ssl/corp-ca.pem', roleAttribute: 'memberOf' });
    const plain = parseConfig(base);
    expect(plain.ok && plain.config.signIn.source === 'ldap' && plain.config.signIn.ldap).toMatchObject({ startTls: false, caFile: undefined });
  });

  it('refuses a StartTLS value that is not a flag, naming the variable', () => {
    const parsed = parseConfig({ ...base, IDP_LDAP_STARTTLS: 'yes' });
    expect(parsed.ok ? '' : parsed.message).toMatch(/^configuration error: IDP_LDAP_STARTTLS must be 1 or 0 \(example: IDP_LDAP_STARTTLS=1\)$/);
  });
});
