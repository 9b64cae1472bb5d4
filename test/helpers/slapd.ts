/**
 * A real directory for tests: Debian's slapd on free loopback ports (ldap:// with StartTLS, and
 * ldaps://), from a slapd.conf written into a temporary directory: mdb backend, the core, cosine
 * and inetorgperson schemas, a few Active Directory attributes (sAMAccountName,
 * userAccountControl) and the memberof overlay, which keeps each user's memberOf in step with
 * the groupOfNames that list them. The certificates come from a throwaway CA made with openssl.
 * When slapd is missing the suites are skipped with one line, unless IDP_TEST_REQUIRE_SERVICES=1.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, tempDir } from './process.ts';
import { waitUntil } from './waits.ts';

const SLAPD = '/usr/sbin/slapd';
export const slapdAvailable = existsSync(SLAPD) && existsSync('/usr/bin/ldapmodify') && existsSync('/usr/bin/openssl');
if (!slapdAvailable) {
  if (process.env.IDP_TEST_REQUIRE_SERVICES === '1') throw new Error(`slapd is required (IDP_TEST_REQUIRE_SERVICES=1) but ${SLAPD}, ldapmodify or openssl is missing: apt-get install slapd ldap-utils openssl`);
  console.warn(`${SLAPD}, ldapmodify or openssl not found: the directory suites are skipped (apt-get install slapd ldap-utils openssl)`);
}

export const BASE_DN = 'dc=example,dc=test';
export const PEOPLE_DN = `ou=people,${BASE_DN}`;
export const READER = { dn: `cn=idp-reader,ou=services,${BASE_DN}`, password: 'reader-secret-0123456789' };
const ROOT = { dn: `cn=admin,${BASE_DN}`, password: 'root-secret-0123456789' };

/** Users of test/helpers/directory.ldif and their passwords. */
export const DIRECTORY_USERS = {
  alice: { dn: `uid=alice,${PEOPLE_DN}`, password: 'alice-directory-password' },
  bob: { dn: `uid=Bob.Smith,${PEOPLE_DN}`, password: 'bob-directory-password' },
  carol: { dn: `cn=Carol White,${PEOPLE_DN}`, password: 'carol-directory-password' },
  dave: { dn: `cn=Dave Disabled,${PEOPLE_DN}`, password: 'dave-directory-password' },
};

// OIDs of Active Directory's own attributes; the class sits in OpenLDAP's experimental arc.
const AD_SCHEMA = `
attributetype ( 1.2.840.113556.1.4.221 NAME 'sAMAccountName' EQUALITY caseIgnoreMatch SUBSTR caseIgnoreSubstringsMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 SINGLE-VALUE )
attributetype ( 1.2.840.113556.1.4.8 NAME 'userAccountControl' EQUALITY integerMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.27 SINGLE-VALUE )
objectclass ( 1.3.6.1.4.1.4203.666.11.99.1 NAME 'idpTestAdAccount' SUP top AUXILIARY MAY ( sAMAccountName $ userAccountControl ) )`;

function slapdConf(dir: string): string {
  return `include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/inetorgperson.schema
${AD_SCHEMA}
pidfile ${dir}/slapd.pid
TLSCACertificateFile ${dir}/ca.pem
TLSCertificateFile ${dir}/server.pem
TLSCertificateKeyFile ${dir}/server.key
modulepath /usr/lib/ldap
moduleload back_mdb
moduleload memberof
database mdb
suffix "${BASE_DN}"
rootdn "${ROOT.dn}"
rootpw ${ROOT.password}
directory ${dir}/data
maxsize 16777216
overlay memberof
access to attrs=userPassword by anonymous auth by * none
access to * by users read by * none
`;
}

function run(command: string, args: string[], input = ''): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args);
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
    // A command that exits before reading its input must not fail the run with EPIPE.
    child.stdin.on('error', () => {});
    child.stdin.end(input);
  });
}

async function must(command: string, args: string[], input?: string): Promise<void> {
  const { code, output } = await run(command, args, input);
  if (code !== 0) throw new Error(`${command} ${args.join(' ')} exited with ${code}: ${output}`);
}

/** A throwaway CA and a certificate for 127.0.0.1 and localhost signed by it. */
async function makeCertificates(dir: string): Promise<void> {
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  await must('openssl', ['req', '-x509', ...ec, '-keyout', join(dir, 'ca.key'), '-out', join(dir, 'ca.pem'), '-days', '2', '-subj', '/CN=IdP test CA',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
  await must('openssl', ['req', ...ec, '-keyout', join(dir, 'server.key'), '-out', join(dir, 'server.csr'), '-subj', '/CN=localhost']);
  writeFileSync(join(dir, 'server.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n');
  await must('openssl', ['x509', '-req', '-in', join(dir, 'server.csr'), '-CA', join(dir, 'ca.pem'), '-CAkey', join(dir, 'ca.key'), '-CAcreateserial',
    '-out', join(dir, 'server.pem'), '-days', '2', '-extfile', join(dir, 'server.ext')]);
}

export interface Slapd {
  /** ldap://127.0.0.1:PORT (StartTLS offered). */
  url: string;
  /** ldaps://127.0.0.1:PORT */
  ldapsUrl: string;
  /** PEM of the CA that signed the server certificate. */
  caFile: string;
  /** Applies LDIF change records (changetype: modify, delete, ...) as the root DN. */
  modify(ldif: string): Promise<void>;
  /** Stops slapd (the data stays) and starts it again on the same ports. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** SIGSTOP (waiting until the process is stopped) and SIGCONT: a directory that accepts connections and never answers. */
  pause(): Promise<void>;
  resume(): void;
  /** Stops slapd and removes its directory. */
  close(): Promise<void>;
}

export async function startSlapd(): Promise<Slapd> {
  const dir = tempDir('idp-slapd-');
  mkdirSync(join(dir.path, 'data'));
  writeFileSync(join(dir.path, 'slapd.conf'), slapdConf(dir.path));
  await makeCertificates(dir.path);
  const [port, tlsPort] = [await freePort(), await freePort()];
  const url = `ldap://127.0.0.1:${port}`;
  const ldapsUrl = `ldaps://127.0.0.1:${tlsPort}`;
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();

  async function start(): Promise<void> {
    let output = '';
    // -d 0: stay in the foreground, as a child of this process, logging nothing but errors.
    const started = spawn(SLAPD, ['-h', `${url}/ ${ldapsUrl}/`, '-f', join(dir.path, 'slapd.conf'), '-d', '0']);
    started.stderr.on('data', (d: Buffer) => (output += d.toString()));
    exited = new Promise((resolve) => started.once('exit', () => resolve()));
    child = started;
    await waitUntil(`slapd answers at ${url}`, async () => (await run('ldapwhoami', ['-x', '-H', url])).code === 0, {
      processes: [started], detail: () => output, intervalMs: 100,
    });
  }

  async function stop(): Promise<void> {
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGCONT');
      child.kill('SIGTERM');
      const timer = setTimeout(() => child?.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    child = undefined;
  }

  const ldapmodify = (ldif: string, add = false) =>
    must('ldapmodify', ['-x', '-H', url, '-D', ROOT.dn, '-w', ROOT.password, ...(add ? ['-a'] : [])], ldif);

  try {
    await start();
    await ldapmodify(readFileSync(join(import.meta.dirname, 'directory.ldif'), 'utf8'), true);
  } catch (error) {
    await stop();
    dir.remove();
    throw error;
  }
  return {
    url,
    ldapsUrl,
    caFile: join(dir.path, 'ca.pem'),
    modify: (ldif) => ldapmodify(ldif),
    stop,
    start,
    async pause() {
      const pid = child?.pid;
      child?.kill('SIGSTOP');
      // The signal reaches every thread a moment later: wait until /proc says "T (stopped)".
      if (pid && child) await waitUntil('slapd stopped', () => /^\d+ \(.*\) T/.test(readFileSync(`/proc/${pid}/stat`, 'utf8')), { processes: [child], intervalMs: 10 });
    },
    resume: () => void child?.kill('SIGCONT'),
    async close() {
      await stop();
      dir.remove();
    },
  };
}
