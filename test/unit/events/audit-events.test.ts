/**
 * The audit events are one typed list (src/events/audit-events.ts), and the table of
 * docs/reference/audit-events.md names exactly those: an event added, renamed or dropped on one side fails here.
 * The sink behind every event writes one line of the shape operators read and counts it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { AUDIT_EVENT_TYPES } from '../../../src/events/audit-events.ts';
import { auditTo, createLogSink } from '../../../src/events/record.ts';
import { createLogger } from '../../../src/logging.ts';
import { createMetrics } from '../../../src/metrics.ts';
import { ROOT } from '../../helpers/process.ts';

/** The event names of the reference's table under "**Audit events**": each backticked name of a row's first cell. */
function documentedEventNames(): string[] {
  const page = readFileSync(join(ROOT, 'docs/reference/audit-events.md'), 'utf8');
  const section = page.slice(page.indexOf('**Audit events**'));
  const table = section.slice(section.indexOf('\n|'), section.indexOf('\n\n', section.indexOf('\n|')));
  const rows = table.split('\n').filter((line) => line.startsWith('|')).slice(2);
  return rows.flatMap((row) => [...(row.split('|')[1] ?? '').matchAll(/`([a-z_]+)`/g)].map((m) => m[1] as string));
}

describe('audit events', () => {
  it('are listed in the table of docs/reference/audit-events.md exactly as the typed union has them', () => {
    const documented = documentedEventNames();
    expect(documented.length).toBeGreaterThan(0);
    expect(new Set(documented).size).toBe(documented.length);
    expect([...documented].sort()).toStrictEqual([...AUDIT_EVENT_TYPES].sort());
  });

  it('are each declared once in the one file, and the list holds every one', () => {
    const source = readFileSync(join(ROOT, 'src/events/audit-events.ts'), 'utf8');
    const declared = [...source.matchAll(/^ {2}type: '([a-z_]+)';$/gm)].map((m) => m[1]);
    expect([...declared].sort()).toStrictEqual([...AUDIT_EVENT_TYPES].sort());
  });

  it('are written as one line with the origin\'s context before the event\'s fields, and counted', async () => {
    const written: string[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        written.push(chunk.toString());
        done();
      },
    });
    const metrics = createMetrics();
    const audit = auditTo(createLogSink(metrics), { log: createLogger('info', destination), context: { request_id: 'req-1', source_address: '192.0.2.7', client_id: 'web' } });
    audit({ type: 'token_issued', grant: 'client_credentials', client_id: 'service' });
    audit({ type: 'sign_in', result: 'throttled', step: 'password', username: 'alice' });
    const lines = written.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.map(({ time: _time, pid: _pid, hostname: _host, ...rest }) => rest)).toStrictEqual([
      // The request id is the request logger's (`reqId`), not printed twice; the event's own client wins.
      { level: 30, audit: true, event: 'token_issued', source_address: '192.0.2.7', client_id: 'service', grant: 'client_credentials', msg: 'token_issued' },
      { level: 30, audit: true, event: 'sign_in', source_address: '192.0.2.7', client_id: 'web', result: 'throttled', step: 'password', username: 'alice', msg: 'sign_in' },
    ]);
    const text = await metrics.render();
    expect(text).toContain('idp_audit_events_total{event="token_issued"} 1');
    expect(text).toContain('idp_tokens_issued_total{grant="client_credentials"} 1');
    expect(text).toContain('idp_sign_ins_total{result="throttled"} 1');
    expect(text).toContain('idp_rate_limited_total{kind="sign_in"} 1');
  });
});
