/**
 * Directory accounts (LDAP or Active Directory): the service account finds the user's entry, a
 * bind as that entry checks the password. Every operation opens its own connection and is over
 * within the timeouts; a directory that is down or slow is `unavailable`, never an exception.
 * A local record (source 'ldap', subject = the account name in lower case) keeps consent, MFA
 * enrolment and the account flags; the directory owns the profile and the roles.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import type { ConnectionOptions } from 'node:tls';
import { Client, InvalidCredentialsError } from 'ldapts';
import type { Logger } from 'pino';
import type { LdapConfig } from '../config.ts';
import { OAuthError } from '../errors.ts';
import type { UserInput, UserRecord } from '../store/records.ts';
import type { UserRepository } from '../store/types.ts';
import { ACCOUNT_ATTRIBUTES, canonicalAccountName, nameWithoutDomain, readAccount, userFilter, type DirectoryAccount } from './ldap-entry.ts';
import type { PasswordSignInSource, SignInResult } from './types.ts';

export interface LdapSourceOptions {
  /** Milliseconds to open a connection (default 3000). */
  connectTimeoutMs?: number;
  /** Milliseconds for each LDAP operation (default 5000); a whole sign-in gets connect + operation. */
  operationTimeoutMs?: number;
  logger?: Pick<Logger, 'warn'> | undefined;
}

export interface LdapSource extends PasswordSignInSource {
  readonly kind: 'ldap';
  /** Binds as the service account (or reads the base entry when there is none); throws when that fails. */
  ping(): Promise<void>;
}

type DirectoryUsers = Pick<UserRepository, 'getBySubject' | 'upsert' | 'update'>;
type Profile = Pick<UserRecord, 'givenName' | 'familyName' | 'name' | 'email' | 'phoneNumber' | 'roles'>;

const INVALID: SignInResult = { ok: false, reason: 'invalid_credentials' };

export function createLdapSource(config: LdapConfig, users: DirectoryUsers, options: LdapSourceOptions = {}): LdapSource {
  const connectTimeout = options.connectTimeoutMs ?? 3000;
  const timeout = options.operationTimeoutMs ?? 5000;
  const tls = tlsOptions(config);

  /** Runs `work` on a new connection bound as the service account, within the deadline, and closes it. */
  async function withConnection<T>(work: (client: Client) => Promise<T>): Promise<T> {
    // tlsOptions on an ldap:// client would make ldapts speak TLS at once: only for ldaps://.
    const client = new Client({ url: config.url, connectTimeout, timeout, ...(config.url.startsWith('ldaps:') ? { tlsOptions: tls } : {}) });
    let timer: NodeJS.Timeout | undefined;
    // ldapts times each message, not a TLS handshake or a slow series of answers: this bounds the whole.
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${connectTimeout + timeout} ms`)), connectTimeout + timeout);
    });
    const run = async () => {
      if (config.startTls) await client.startTLS({ ...tls });
      if (config.bindDn) await client.bind(config.bindDn, config.bindPassword ?? '');
      return work(client);
    };
    try {
      return await Promise.race([run(), expired]);
    } finally {
      clearTimeout(timer);
      client.unbind().catch(() => undefined);
    }
  }

  async function findAccount(client: Client, accountName: string): Promise<DirectoryAccount | undefined> {
    const { searchEntries } = await client.search(config.baseDn, {
      scope: 'sub',
      filter: userFilter(config.userFilter, accountName),
      attributes: [...ACCOUNT_ATTRIBUTES, config.roleAttribute],
      sizeLimit: 2,
      timeLimit: Math.max(1, Math.ceil(timeout / 1000)),
    });
    // Two entries answer to one name: refuse rather than guess whose password to try.
    if (searchEntries.length > 1) options.logger?.warn({ count: searchEntries.length }, 'directory: more than one entry matches the user filter');
    const [entry] = searchEntries;
    return entry && searchEntries.length === 1 ? readAccount(entry, accountName, config.roleAttribute) : undefined;
  }

  /** Creates or refreshes the local record; flags and MFA enrolment stay as they are. */
  async function remember(account: DirectoryAccount): Promise<UserRecord> {
    const profile: Profile = {
      givenName: account.givenName, familyName: account.familyName, name: account.name,
      email: account.email, phoneNumber: account.phoneNumber, roles: account.roles,
    };
    const existing = await users.getBySubject('ldap', account.subject);
    if (!existing) {
      const user: UserInput = {
        id: randomBytes(16).toString('base64url'), source: 'ldap', subject: account.subject, username: account.subject,
        passwordHash: null, ...profile, emailVerified: false, phoneNumberVerified: false,
        locked: false, mustChangePassword: false, mustEnrolMfa: false,
      };
      await users.upsert(user);
    } else {
      // Only the columns the directory owns, and only when they changed (updated_at is a claim).
      const change: Partial<UserInput> = Object.fromEntries(
        Object.entries(profile).filter(([key, value]) => JSON.stringify(existing[key as keyof Profile]) !== JSON.stringify(value)),
      );
      // A changed address or number is not the one that was verified.
      if ('email' in change) change.emailVerified = false;
      if ('phoneNumber' in change) change.phoneNumberVerified = false;
      if (Object.keys(change).length > 0) await users.update(existing.id, change);
    }
    const stored = await users.getBySubject('ldap', account.subject);
    if (!stored) throw new Error(`the local record of directory account ${account.subject} vanished`);
    return stored;
  }

  function unavailable(error: unknown): void {
    options.logger?.warn({ err: error instanceof Error ? error.message : String(error), url: config.url }, 'directory unavailable');
  }

  return {
    kind: 'ldap',
    async signIn(username, password): Promise<SignInResult> {
      const accountName = nameWithoutDomain(username);
      // RFC 4513 §5.1.2: a bind with a name and an empty password is unauthenticated and succeeds.
      if (accountName === undefined || password === '') return INVALID;
      let account: DirectoryAccount | undefined;
      try {
        account = await withConnection(async (client) => {
          const found = await findAccount(client, accountName);
          if (!found) return undefined;
          try {
            await client.bind(found.dn, password);
          } catch (error) {
            if (error instanceof InvalidCredentialsError) return undefined;
            throw error;
          }
          return found;
        });
      } catch (error) {
        unavailable(error);
        return { ok: false, reason: 'unavailable' };
      }
      // Unknown account and wrong password get one answer; locked is said only after the password.
      if (!account) return INVALID;
      if (account.disabled) return { ok: false, reason: 'locked' };
      const user = await remember(account);
      if (user.locked) return { ok: false, reason: 'locked' };
      return { ok: true, user, amr: ['pwd'] };
    },
    canonicalAccountName,
    async currentUser(user) {
      if (user.source !== 'ldap') return undefined;
      let account: DirectoryAccount | undefined;
      try {
        account = await withConnection((client) => findAccount(client, user.subject));
      } catch (error) {
        unavailable(error);
        // Not "gone": the directory could not say. The caller fails the request instead of the user.
        throw new OAuthError('temporarily_unavailable', 'The directory is unavailable. Try again in a moment.', { detail: String(error) });
      }
      if (!account || account.disabled || account.subject !== user.subject) return undefined;
      return remember(account);
    },
    async ping() {
      await withConnection(async (client) => {
        if (!config.bindDn) await client.search(config.baseDn, { scope: 'base', attributes: ['1.1'] });
      });
    },
  };
}

/** TLS settings for ldaps:// and StartTLS: the configured CA (read once, at start) and the host to verify. */
function tlsOptions(config: LdapConfig): ConnectionOptions {
  const host = new URL(config.url).hostname.replace(/^\[|\]$/g, '');
  let ca: Buffer | undefined;
  if (config.caFile) {
    try {
      ca = readFileSync(config.caFile);
    } catch (error) {
      throw new Error(`IDP_LDAP_CA_FILE ${config.caFile} cannot be read: ${(error as Error).message}`, { cause: error });
    }
  }
  // RFC 6066 §3: no server name indication for an IP address; the certificate is checked against it.
  return { host, ...(isIP(host) ? {} : { servername: host }), ...(ca ? { ca } : {}) };
}
