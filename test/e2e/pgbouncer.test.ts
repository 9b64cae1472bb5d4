/**
 * Behind Debian's PgBouncer (1.18) in transaction pooling, as a deployment that pools its
 * connections runs: DATABASE_URL through the pooler with IDP_DATABASE_PREPARED_STATEMENTS=off
 * (this PgBouncer cannot carry named prepared statements), IDP_DATABASE_LISTEN_URL straight to
 * PostgreSQL (LISTEN needs a session of its own, which transaction pooling does not keep).
 * Seeding, sign-in, code exchange, refresh and client credentials go through the pooler, and an
 * SQL edit of a client reaches every instance within a second. Without the listen URL, /readyz
 * and `idp doctor` say that notifications do not arrive; with one where nothing answers, the
 * instance serves and /readyz says so.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliContext } from '../../src/cli/context.ts';
import { runDoctor } from '../../src/cli/doctor.ts';
import { checkChangeFeed } from '../../src/cli/doctor-infrastructure.ts';
import { parseConfig } from '../../src/config.ts';
import { NO_MAILER } from '../../src/mail/mailer.ts';
import { openDurableStore } from '../../src/store/sql/durable.ts';
import type { DurableStore } from '../../src/store/types.ts';
import { pgbouncerAvailable, startPgBouncer, type PgBouncer } from '../helpers/distributed.ts';
import { freePort, runIdp, seedWith, startServer, type RunningServer } from '../helpers/process.ts';
import { POSTGRES_ADMIN_URL, createTestDatabase, postgresAvailable, runSql, type TestDatabase } from '../helpers/services.ts';
import {
  ALICE, Balancer, IDP_SECRET, SERVICE_SECRET, WEB_REDIRECT, WEB_SECRET, seedOf, serviceClient, sleep, startOwnRedis, webClient, type OwnRedis,
} from './operations-support.ts';
import { Browser, authorize, introspect, refresh, token, type ClientCredentials } from './token-lifecycle-support.ts';

const WEB: ClientCredentials = { clientId: 'web', secret: WEB_SECRET };
const SERVICE: ClientCredentials = { clientId: 'svc', secret: SERVICE_SECRET };
const EDITED: ClientCredentials = { clientId: 'svc-sql', secret: SERVICE_SECRET };

describe.runIf(postgresAvailable && pgbouncerAvailable)('behind PgBouncer in transaction pooling', () => {
  let bouncer: PgBouncer;
  let db: TestDatabase;
  let redis: OwnRedis;
  let lb: Balancer;
  let instances: RunningServer[] = [];
  /** What an instance behind the pooler is given. */
  let pooled: Record<string, string>;

  beforeAll(async () => {
    [bouncer, db, redis, lb] = await Promise.all([startPgBouncer(POSTGRES_ADMIN_URL), createTestDatabase(), startOwnRedis(), Balancer.start()]);
    pooled = { DATABASE_URL: bouncer.urlFor(db.url), IDP_DATABASE_PREPARED_STATEMENTS: 'off', IDP_SECRET };
    // Seeded (and so migrated) through the pooler, as an administrator behind it would.
    await seedWith(seedOf([webClient('web'), serviceClient('svc'), serviceClient('svc-sql')], [ALICE]), pooled);
    const env = { ...pooled, IDP_DATABASE_LISTEN_URL: db.url, REDIS_URL: redis.url, IDP_BASE_URL: lb.url, IDP_TRUST_PROXY: 'true', LOG_LEVEL: 'info' };
    instances = await Promise.all([startServer(env), startServer(env)]);
  });

  afterAll(async () => {
    await Promise.all(instances.map((s) => s.stop()));
    await lb?.close();
    await redis?.stop();
    await bouncer?.stop();
    await db?.drop();
  });

  it('signs in, exchanges the code at the other instance, refreshes and serves client credentials', async () => {
    const [A, B] = instances as [RunningServer, RunningServer];
    const browser = new Browser();
    lb.use(A);
    const { code, verifier } = await authorize(browser, lb.url, 'web', WEB_REDIRECT, ALICE, 'openid offline_access');
    lb.use(B);
    const exchanged = await token(lb.url, WEB, { grant_type: 'authorization_code', code, redirect_uri: WEB_REDIRECT, code_verifier: verifier });
    expect(exchanged.status, exchanged.text).toBe(200);
    let refreshToken = String(exchanged.body.refresh_token);
    for (const server of [A, B, A]) {
      lb.use(server);
      const refreshed = await refresh(lb.url, WEB, refreshToken);
      expect(refreshed.status, refreshed.text).toBe(200);
      refreshToken = String(refreshed.body.refresh_token);
    }
    lb.use(B);
    const active = await introspect(lb.url, WEB, refreshToken);
    expect(active.body).toMatchObject({ active: true });
    const service = await token(lb.url, SERVICE, { grant_type: 'client_credentials', scope: 'orders.read' });
    expect(service.status, service.text).toBe(200);
    for (const server of instances) expect(server.output(), 'no prepared statement reached the pooler').not.toMatch(/prepared statement/i);
  });

  it('an SQL edit of a client reaches every instance within a second', async () => {
    const serves = async (server: RunningServer) => {
      lb.use(server);
      return (await token(lb.url, EDITED, { grant_type: 'client_credentials', scope: 'orders.read' })).status;
    };
    for (const server of instances) expect(await serves(server)).toBe(200);
    // As an administrator would, with psql, straight on the database.
    await runSql(db.url, "update clients set enabled = false where client_id = 'svc-sql'");
    const started = Date.now();
    const pending = new Set(instances);
    while (pending.size > 0) {
      for (const server of [...pending]) if ((await serves(server)) === 401) pending.delete(server);
      expect(Date.now() - started, 'every instance refuses the disabled client').toBeLessThan(1000);
      if (pending.size > 0) await sleep(20);
    }
  });

  it('without IDP_DATABASE_LISTEN_URL, /readyz and idp doctor say that notifications do not arrive', async () => {
    const deaf = await startServer({ ...pooled, REDIS_URL: redis.url }, undefined, { readyPath: '/healthz' });
    try {
      // The probe waits 2 s for its notification.
      await sleep(2500);
      const ready = await fetch(`${deaf.url}/readyz`);
      expect(ready.status).toBe(503);
      expect(await ready.json()).toMatchObject({ status: 'unavailable', database: 'ok', store: 'ok', changes: 'unavailable' });
      expect(deaf.output()).toContain('IDP_DATABASE_LISTEN_URL');
      const doctor = await runIdp(['doctor', '--url', deaf.url], { ...pooled, REDIS_URL: redis.url, IDP_BASE_URL: deaf.url, HOST: '127.0.0.1', PORT: String(deaf.port) });
      expect(doctor.code).toBe(1);
      const line = doctor.stdout.split('\n').find((l) => /^\S+ +change feed /.test(l));
      expect(line).toMatch(/^FAIL +change feed +change notifications do not arrive on PostgreSQL at 127\.0\.0\.1:\d+\/idp_test_\w+: .*; fix: set IDP_DATABASE_LISTEN_URL/);
    } finally {
      await deaf.stop();
    }
  });

  it('with a listen URL nothing answers at, serves all the same and /readyz says the changes are unavailable', async () => {
    const nowhere = new URL(db.url);
    nowhere.port = String(await freePort());
    const deaf = await startServer({ ...pooled, IDP_DATABASE_LISTEN_URL: nowhere.href, REDIS_URL: redis.url }, undefined, { readyPath: '/healthz' });
    try {
      const ready = await fetch(`${deaf.url}/readyz`);
      expect(ready.status).toBe(503);
      expect(await ready.json()).toMatchObject({ status: 'unavailable', database: 'ok', changes: 'unavailable' });
      const discovery = await fetch(`${deaf.url}/.well-known/openid-configuration`);
      expect(discovery.status).toBe(200);
    } finally {
      await deaf.stop();
    }
  });

  it('idp doctor warns when DATABASE_URL looks like a pooler and no listen URL is set', async () => {
    const check = async (env: Record<string, string>) => {
      const parsed = parseConfig({ IDP_SECRET, ...env });
      if (!parsed.ok) throw new Error(parsed.message);
      let durable: DurableStore | undefined;
      const context: CliContext = {
        config: parsed.config, secret: Buffer.from(IDP_SECRET, 'hex'), clock: Date.now, json: false,
        // The name is a pooler's; the connection, for the check to run, is the database itself.
        openDurable: async () => (durable ??= await openDurableStore({ databaseUrl: db.url })),
        mailer: () => NO_MAILER, closeMailer: async () => [],
        audit: () => {}, out: () => {}, err: () => {}, readStdin: async () => '', runProgram: async () => undefined,
      };
      try {
        const report = await runDoctor(context, 'http://127.0.0.1:9', { checks: [{ name: 'change feed', run: checkChangeFeed }] });
        return report.checks[0];
      } finally {
        await durable?.close();
      }
    };
    const pgbouncerHost = 'postgres://idp@pgbouncer.internal:6432/idp';
    expect(await check({ DATABASE_URL: pgbouncerHost })).toMatchObject({
      status: 'warn', detail: expect.stringMatching(/^DATABASE_URL looks like a connection pooler/), fix: expect.stringMatching(/^set IDP_DATABASE_LISTEN_URL/),
    });
    expect(await check({ DATABASE_URL: pgbouncerHost, IDP_DATABASE_LISTEN_URL: 'postgres://idp@db.internal:5432/idp' })).toMatchObject({ status: 'ok' });
  });
});
