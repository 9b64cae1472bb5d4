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
    for (const text of [compose, read('README.md'), read('docs/production.md')]) expect(text).not.toMatch(/IDP_SECRET=\$\(openssl[^)]*\) docker compose/);
    expect(read('docs/production.md')).toContain('echo "IDP_SECRET=$(openssl rand -base64 32)" > .env');
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

describe('the management port: image, compose and Prometheus', () => {
  it('exposes 9464 beside 3000 in the image, listening where Prometheus on the container network reaches it', () => {
    const dockerfile = read('Dockerfile');
    expect(dockerfile).toMatch(/^EXPOSE 3000 9464$/m);
    expect(dockerfile).toMatch(/IDP_MANAGEMENT_PORT=9464/);
    expect(dockerfile).toMatch(/IDP_MANAGEMENT_HOST=0\.0\.0\.0/);
  });

  it('scrapes every instance of compose.yaml on its management port, never through the proxy, and publishes no 9464', () => {
    const compose = read('compose.yaml');
    const prometheus = read('deploy/prometheus/prometheus.yml');
    const instances = [...compose.matchAll(/^ {2}(idp-\d+): \*idp$/gm)].map((m) => `${m[1]}:9464`);
    expect(instances).toStrictEqual(['idp-1:9464', 'idp-2:9464']);
    expect(prometheus).toMatch(/^ {2}- job_name: idp$/m);
    expect(/targets: \[([^\]]*)\]/.exec(prometheus)?.[1]?.split(',').map((t) => t.trim().replace(/'/g, ''))).toStrictEqual(instances);
    expect(prometheus).toMatch(/^ {2}- alerts\.yml$/m);
    expect(compose).toContain('./deploy/prometheus/prometheus.yml:/etc/prometheus/prometheus.yml:ro');
    expect(compose).not.toMatch(/^\s+- "(\d+:)?9464(:9464)?"$/m);
  });
});
