import pg from 'pg';
import { openDurableStore } from '../src/store/sql/durable.ts';
const base = 'postgres://postgres@127.0.0.1:5432';
const name = `idp_scratch_${process.pid}`;
const admin = new pg.Client({ connectionString: `${base}/postgres` }); await admin.connect();
await admin.query(`CREATE DATABASE ${name}`);
const url = `${base}/${name}`;
const store = await openDurableStore({ databaseUrl: url });
await store.migrate();
await store.webhooks.create({ id: 'ep_a', url: 'https://x.example/h', eventTypes: ['token_issued'], enabled: true, description: '', secretSealed: 's' });
const db = new pg.Client({ connectionString: url }); await db.connect(); await db.query("CREATE EXTENSION pg_stat_statements");
if (process.argv[2] === 'nofk') {
  for (const c of ['webhook_deliveries_event_id_fkey', 'webhook_deliveries_endpoint_id_fkey']) await db.query(`ALTER TABLE webhook_deliveries DROP CONSTRAINT ${c}`);
  await db.query('ALTER TABLE webhook_attempts DROP CONSTRAINT webhook_attempts_delivery_id_fkey');
}
let n = 0;
const ev = () => ({ id: `evt_${process.pid}_${++n}`, type: 'token_issued', occurredAt: new Date(), data: { client_id: 'web', grant_type: 'authorization_code', sub: 'u1', scope: 'openid profile' } });
const limits = { total: 1000, perEndpoint: 1000, busy: new Map(), leaseSeconds: 20 };
const cpu = async () => Number((await db.query(`SELECT sum(total_exec_time) AS t FROM pg_stat_statements WHERE query LIKE '%jsonb_to_recordset%'`)).rows[0].t ?? 0);
for (let i = 0; i < 50; i++) await store.outbox.appendMany(Array.from({ length: 30 }, ev), limits);
const t0 = await cpu(); const w0 = performance.now();
for (let i = 0; i < 400; i++) await store.outbox.appendMany(Array.from({ length: 30 }, ev), limits);
const t1 = await cpu(); const w1 = performance.now();
console.log(process.argv[2] ?? 'fk', 'exec µs per event', ((t1 - t0) * 1000 / 12000).toFixed(1), 'wall µs per event', ((w1 - w0) * 1000 / 12000).toFixed(1));
await db.end(); await store.close();
await admin.query(`DROP DATABASE ${name} WITH (FORCE)`); await admin.end();
