/**
 * The `idp` command started the ways an operator starts it from a shell whose `node` is the
 * system's (older) Node.js: `node bin/idp.js` answers in one line that it needs Node.js 24, and
 * the README's `npm run idp -- …` and `npx idp …` print no npm engine warning.
 */
import { execFileSync } from 'node:child_process';
import { delimiter } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { IDP_BIN, runProcess, tempDir, type RunResult } from '../helpers/process.ts';

/** The PATH of an operator's shell: the project's own bin folder (where npm scripts find Node.js 24) left out. */
const SHELL_PATH = (process.env.PATH ?? '').split(delimiter).filter((dir) => !dir.includes('node_modules')).join(delimiter);

/** The first `node` on that PATH and its major version, or undefined when there is none. */
function systemNode(): { path: string; major: number } | undefined {
  try {
    const path = execFileSync('sh', ['-c', 'command -v node'], { env: { PATH: SHELL_PATH }, encoding: 'utf8' }).trim();
    const version = execFileSync(path, ['--version'], { encoding: 'utf8' }).trim();
    return { path, major: Number(/^v(\d+)/.exec(version)?.[1]) };
  } catch {
    return undefined;
  }
}

function run(command: string, args: string[], env: Record<string, string> = {}): Promise<RunResult> {
  return runProcess(command, args, { PATH: SHELL_PATH, HOME: process.env.HOME ?? '/tmp', ...env });
}

const node = systemNode();
const olderNode = node !== undefined && node.major < 24 ? node : undefined;
if (!olderNode) console.log('cli-runtime: no Node.js older than 24 on the PATH; the older-Node.js test is skipped');
const npmFound = node !== undefined;

describe('the idp command on an operator\'s shell', () => {
  const cache = tempDir('idp-npm-cache-');
  afterAll(() => cache.remove());

  it.runIf(olderNode)('bin/idp.js started by an older Node.js says in one line that it needs Node.js 24, exit 2', async () => {
    const result = await run(olderNode?.path ?? 'node', [IDP_BIN, '--help']);
    expect({ code: result.code, stdout: result.stdout }).toStrictEqual({ code: 2, stdout: '' });
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^idp needs Node\.js 24 or newer \(this is v\d+\.\d+\.\d+\); run it as "npm run idp -- COMMAND" from the project folder/);
  });

  it.runIf(npmFound)('npm run idp -- --help: the usage, no engine warning', async () => {
    const result = await run('npm', ['run', '-s', 'idp', '--', '--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^usage: idp COMMAND/);
    expect(result.stderr).not.toContain('EBADENGINE');
  });

  it.runIf(npmFound)('npx idp --help, the first time (npm installs the project into its cache): no engine warning', async () => {
    const result = await run('npx', ['idp', '--help'], { npm_config_cache: cache.path, npm_config_update_notifier: 'false' });
    expect(result.stderr).not.toContain('EBADENGINE');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^usage: idp COMMAND/);
  });
});
