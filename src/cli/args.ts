/**
 * Strict argument parsing for one command (node:util parseArgs): an unknown flag, a flag
 * without its value, a missing or an extra argument is a UsageError naming it.
 */
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';
import { UsageError } from './context.ts';

export interface CommandSpec<T extends ParseArgsOptionsConfig> {
  /** `idp clients show ID`: quoted in every usage error of this command. */
  usage: string;
  options: T;
  /** Names of the required positional arguments, in order (`['ID']`). */
  positionals: readonly string[];
}

type Values<T extends ParseArgsOptionsConfig> = ReturnType<
  typeof parseArgs<{ args: string[]; options: T; strict: true; allowPositionals: true }>
>['values'];

export interface ParsedCommand<T extends ParseArgsOptionsConfig> {
  values: Values<T>;
  positionals: string[];
}

/**
 * A value that begins with a dash, such as a key id from `idp keys list` (a base64url thumbprint
 * starts with `-` one time in 64, with `--` one time in 4096), which parseArgs would take for a
 * group of short flags or a long one: a dash and at least two more characters, the second no
 * dash (no flag of ours is short), or two dashes and anything an option name cannot be (ours are
 * lower case words joined by dashes, so `--colour` stays an unknown option).
 */
const DASHED_VALUE = /^(?:-[^-].|--(?![a-z][a-z0-9-]*(?:=|$)).)/s;
/**
 * A dashed value stands in as this and its position while parseArgs reads the line: no dash
 * first, and no real argument starts with it (a command line cannot hold a NUL byte).
 */
const PLACEHOLDER = '\u0000';

export function parseCommand<T extends ParseArgsOptionsConfig>(spec: CommandSpec<T>, args: string[]): ParsedCommand<T> {
  const shielded = args.map((arg, index) => (DASHED_VALUE.test(arg) ? `${PLACEHOLDER}${index}` : arg));
  const restore = <V>(value: V): V => (typeof value === 'string' && value.startsWith(PLACEHOLDER) ? (args[Number(value.slice(1))] as V) : value);
  let parsed: ParsedCommand<T>;
  try {
    const raw = parseArgs({ args: shielded, options: spec.options, strict: true, allowPositionals: true });
    const values = Object.fromEntries(Object.entries(raw.values).map(([name, value]) => [name, Array.isArray(value) ? value.map(restore) : restore(value)]));
    parsed = { values: values as Values<T>, positionals: raw.positionals.map(restore) };
  } catch (error) {
    throw new UsageError(`${describeParseError(error)} (usage: ${spec.usage})`);
  }
  const missing = spec.positionals[parsed.positionals.length];
  if (missing !== undefined) throw new UsageError(`missing argument ${missing} (usage: ${spec.usage})`);
  const extra = parsed.positionals[spec.positionals.length];
  if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}" (usage: ${spec.usage})`);
  return parsed;
}

/** parseArgs explains itself over several lines; one short line naming the flag is enough. */
export function describeParseError(error: unknown): string {
  const code = (error as { code?: string }).code;
  const message = error instanceof Error ? error.message : String(error);
  const flag = /'(-{1,2}[^'\s<]+)/.exec(message)?.[1] ?? 'an option';
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return `unknown option ${flag}`;
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    return message.includes('does not take an argument') ? `option ${flag} takes no value` : `option ${flag} needs a value`;
  }
  return message.split('\n')[0] ?? 'bad arguments';
}

/** Splits `idp clients show web` into the subcommand and its arguments; a missing one is a usage error. */
export function subcommand(family: string, names: readonly string[], args: string[]): { name: string; rest: string[] } {
  const [name, ...rest] = args;
  if (name === undefined || !names.includes(name)) {
    const what = name === undefined ? 'missing subcommand' : `unknown subcommand "${name}"`;
    throw new UsageError(`${what} (usage: idp ${family} ${names.join(' | ')})`);
  }
  return { name, rest };
}

/** `--NAME` / `--no-NAME`: true, false, or undefined when neither is given; both is bad usage. */
export function onOrOff(values: Readonly<Record<string, unknown>>, name: string, usage: string): boolean | undefined {
  if (values[name] && values[`no-${name}`]) throw new UsageError(`give --${name} or --no-${name}, not both (usage: ${usage})`);
  return values[name] ? true : values[`no-${name}`] ? false : undefined;
}

/** A stored list with the values of `--add-X` appended and those of `--remove-X` taken out. */
export function editedList(stored: readonly string[], added: readonly string[], removed: readonly string[]): string[] {
  return [...stored, ...added].filter((value) => !removed.includes(value));
}
