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
}

export type AdminErrorCode = 'not_found' | 'conflict' | 'invalid';

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

/** `['clients', 0, 'redirect_uris', 1]` -> `clients[0].redirect_uris[1]`, as error lines name a field. */
export function formatPath(path: FieldPath): string {
  const text = path.reduce<string>((acc, key) => (typeof key === 'number' ? `${acc}[${key}]` : acc ? `${acc}.${key}` : key), '');
  return text || '(file)';
}
