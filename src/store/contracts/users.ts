/** Users: lookups, writes and the username-ordered list. */
import type { Versioned, SignInSourceKind, UserRecord, UserInput } from '../records.ts';
import type { IfVersion, UpsertResult } from './shared.ts';

export interface UserRepository {
  getById(id: string): Promise<UserRecord | undefined>;
  /** The user with their row version, read together. */
  getVersioned(id: string): Promise<Versioned<UserRecord> | undefined>;
  /** Case-insensitive lookup within one sign-in source. */
  getByUsername(source: SignInSourceKind, username: string): Promise<UserRecord | undefined>;
  getBySubject(source: SignInSourceKind, subject: string): Promise<UserRecord | undefined>;
  /** Case-insensitive lookup by email address within one sign-in source: at most two (more than one is ambiguous). */
  findByEmail(source: SignInSourceKind, email: string): Promise<UserRecord[]>;
  list(): Promise<UserRecord[]>;
  /** Inserts or replaces by (source, username); keeps the existing id. */
  upsert(user: UserInput): Promise<UpsertResult>;
  /** Inserts a new user and returns them with their version; undefined when the name (or id) is taken (nothing written). */
  insert(user: UserInput): Promise<Versioned<UserRecord> | undefined>;
  /** The users of these names within one source (case-insensitive), in one statement (an import's batch). */
  getManyByUsername(source: SignInSourceKind, usernames: readonly string[]): Promise<UserRecord[]>;
  /** Inserts new users in one statement (an import's batch); throws, inserting none, when one of them exists. */
  insertMany(users: readonly UserInput[]): Promise<void>;
  update(id: string, change: Partial<Omit<UserInput, 'id' | 'source'>>, ifVersion?: IfVersion): Promise<boolean>;
  /** `update`, returning the user as written with their new version (undefined where `update` is false). */
  change(id: string, change: Partial<Omit<UserInput, 'id' | 'source'>>, ifVersion?: IfVersion): Promise<Versioned<UserRecord> | undefined>;
  remove(id: string, ifVersion?: IfVersion): Promise<boolean>;
  /**
   * Users of any source in username order (case aside, then id), those after `after`, at most
   * `limit`, each with its place in that order (the next page's `after`). An index serves every
   * filter (migration 2026-11-29-0060), so a page costs the same at any depth.
   */
  page(request: UserPageRequest): Promise<Array<{ user: UserRecord; place: UserPlace }>>;
  count(): Promise<number>;
  /** How many users the filter matches (all of them without one). */
  countMatching(filter: UserFilter): Promise<number>;
  /** The locked users of any source, the first `limit` in username order, and how many are locked in all. */
  locked(limit: number): Promise<{ users: UserRecord[]; count: number }>;
}

/** Which users a list holds; the filters given all apply, each case aside. */
export interface UserFilter {
  /** The username exactly. */
  username?: string | undefined;
  /** The email address exactly. */
  email?: string | undefined;
  /** The start of the username, the email, the given or the family name. */
  q?: string | undefined;
}

/** A user's place in the username order: the lower-cased username (as the database lowers it), then the id. */
export interface UserPlace {
  name: string;
  id: string;
}

export interface UserPageRequest extends UserFilter {
  after: UserPlace | undefined;
  limit: number;
}
