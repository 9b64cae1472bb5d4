/**
 * The one error of the administrative layer. `code` says what kind of refusal it is (an HTTP
 * layer maps it to a status and RFC 9457 problem details, each field problem's path to a JSON
 * pointer); `message` is the one line the command line prints; `problems` name each wrong field.
 */

/** `['clients', 0, 'redirect_uris', 1]`: the field a problem is about, in the input's wire names. */
export type FieldPath = readonly (string | number)[];

export interface FieldProblem {
  path: FieldPath;
  message: string;
  /**
   * The value is not of its field's form (the wire schema's rules), as opposed to a rule across
   * fields or one on what is stored: the command line names the flag that gave it.
   */
  malformed?: true;
}

/**
 * `stale`: the record changed since the version the caller named (its write would lose that
 * change). `key_reused`: an idempotency key came back with another request than its first.
 */
export type AdminErrorCode = 'not_found' | 'conflict' | 'invalid' | 'stale' | 'key_reused';

export class AdminError extends Error {
  override name = 'AdminError';
  readonly code: AdminErrorCode;
  readonly problems: readonly FieldProblem[];
  constructor(code: AdminErrorCode, message: string, problems: readonly FieldProblem[] = []) {
    super(message);
    this.code = code;
    this.problems = problems;
  }
}

/**
 * After a write at a version that wrote nothing: the record changed meanwhile (it is still
 * there) or it is gone.
 */
export function staleOrGone(stillThere: boolean, subject: string): AdminError {
  return stillThere
    ? new AdminError('stale', `${subject} changed since the version given: read it again and redo the change`)
    : new AdminError('not_found', `${subject} does not exist`);
}

/** Refuses to act on a record read at another version than the caller's. */
export function refuseOtherVersion(version: number | undefined, ifVersion: number | undefined, subject: string): void {
  if (ifVersion !== undefined && version !== ifVersion) throw staleOrGone(true, subject);
}

/** `['clients', 0, 'redirect_uris', 1]` -> `clients[0].redirect_uris[1]`, as error lines name a field. */
export function formatPath(path: FieldPath): string {
  const text = path.reduce<string>((acc, key) => (typeof key === 'number' ? `${acc}[${key}]` : acc ? `${acc}.${key}` : key), '');
  return text || '(file)';
}
