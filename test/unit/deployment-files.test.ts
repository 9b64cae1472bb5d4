/**
 * compose.yaml as an operator runs it (Compose itself is not on the test machines): the master
 * secret comes from a .env made once, never from a command that makes a new one on every `up`,
 * and stays out of git and the image; both instances run one image.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/process.ts';

const read = (name: string) => readFileSync(join(ROOT, name), 'utf8');

describe('compose.yaml', () => {
  const compose = read('compose.yaml');

  it('requires IDP_SECRET from the environment or .env, and generates none', () => {
    expect(compose).toMatch(/^ {4}IDP_SECRET: \$\{IDP_SECRET:\?[^}]*\.env[^}]*\}$/m);
    expect(compose).toMatch(/^ {4}IDP_SECRET_PREVIOUS: \$\{IDP_SECRET_PREVIOUS:-\}$/m);
    for (const text of [compose, read('README.md')]) expect(text).not.toMatch(/IDP_SECRET=\$\(openssl[^)]*\) docker compose/);
    expect(read('README.md')).toContain('echo "IDP_SECRET=$(openssl rand -base64 32)" > .env');
  });

  it('keeps .env out of git and out of the image', () => {
    expect(read('.gitignore').split('\n')).toContain('.env');
    expect(read('.dockerignore').split('\n')).toContain('.env');
  });

  it('runs both instances from one image', () => {
    const anchor = /^x-idp: &idp\n((?: {2}.*\n)+)/m.exec(compose)?.[1] ?? '';
    expect(anchor).toMatch(/^ {2}image: idp:local$/m);
    expect(anchor).toMatch(/^ {2}build: \.$/m);
    expect(compose).toMatch(/^ {2}idp-1: \*idp$/m);
    expect(compose).toMatch(/^ {2}idp-2: \*idp$/m);
  });
});
