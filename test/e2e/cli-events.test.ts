/**
 * `idp events` as an operator runs it, on PostgreSQL and on the embedded database: the command
 * line's own changes are in the log, newest first, one line each (or one JSON object per line),
 * filtered by type and user; a wrong time names its flag; an exclusion that names no event type
 * stops the command line (and the server) at start.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runIdp, tempDir } from '../helpers/process.ts';
import { createTestDatabase, postgresAvailable, type TestDatabase } from '../helpers/services.ts';

const IDP_SECRET = 'f'.repeat(64);
const PASSWORD = 'a long enough password 4711';

function eventsSuite(name: string, database: () => Promise<{ env: Record<string, string>; drop(): Promise<void> }>): void {
  describe(name, () => {
    const dataDir = tempDir();
    let env: Record<string, string>;
    let drop: () => Promise<void>;
    const idp = (args: string[], more: Record<string, string> = {}) => runIdp(args, { IDP_SECRET, IDP_DATA_DIR: dataDir.path, LOG_LEVEL: 'warn', ...env, ...more });
    let sub = '';

    beforeAll(async () => {
      ({ env, drop } = await database());
      const added = await idp(['users', 'add', '--username', 'grace', '--password', PASSWORD, '--json']);
      expect(added.code, added.stderr).toBe(0);
      sub = (JSON.parse(added.stdout) as { sub: string }).sub;
      expect((await idp(['users', 'lock', 'grace'])).code).toBe(0);
      expect((await idp(['scopes', 'add', 'orders.read'])).code).toBe(0);
      // Each command opens (and on first use migrates) the embedded database: slow on a busy machine.
    }, 600_000);
    afterAll(async () => {
      await drop();
      dataDir.remove();
    });

    it('prints the log newest first, one line per event with its time, type, user and client', async () => {
      const listed = await idp(['events']);
      expect(listed.code, listed.stderr).toBe(0);
      const lines = listed.stdout.trim().split('\n');
      expect(lines[0]).toMatch(/^TIME\s+TYPE\s+USER\s+CLIENT\s+DETAILS$/);
      expect(lines).toHaveLength(4);
      expect(lines[1]).toMatch(/^\d{4}-\d\d-\d\dT\S+Z\s+admin_change\s+-\s+-\s+\S/);
      for (const field of ['actor=cli', 'action=create', 'resource=api_scope', 'resource_id=orders.read']) expect(lines[1]).toContain(field);
      // A change to a user is about that user: the user column names them.
      expect(lines[2]).toMatch(new RegExp(`^\\S+\\s+admin_change\\s+${sub}\\s+-\\s+`));
      for (const field of ['action=update', 'fields=["locked"]']) expect(lines[2]).toContain(field);
      expect(lines[3]).toContain('action=create');
      expect(lines[3]).toContain(`resource_id=${sub}`);
    });

    it('prints one JSON object per line with --json, filtered by type and user', async () => {
      const listed = await idp(['events', '--json', '--type', 'admin_change', '--type', 'sign_in', '--user', sub, '--limit', '1']);
      expect(listed.code, listed.stderr).toBe(0);
      const lines = listed.stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(lines).toEqual([{ id: expect.stringMatching(/^evt_/), type: 'admin_change', occurred_at: expect.any(String), data: expect.objectContaining({ action: 'update', resource_id: sub }) }]);
      expect((await idp(['events', '--since', new Date(Date.now() + 60_000).toISOString()])).stdout.trim()).toBe('no events');
    });

    it('names the flag of a wrong time or limit (exit 2)', async () => {
      const since = await idp(['events', '--since', 'yesterday']);
      expect(since.code).toBe(2);
      expect(since.stderr).toContain('--since "yesterday": must be an RFC 3339 date and time');
      expect((await idp(['events', '--limit', '0'])).stderr).toContain('--limit "0"');
    });

    it('refuses to start with an exclusion that names no event type', async () => {
      const refused = await idp(['events'], { IDP_AUDIT_LOG_EXCLUDE: 'token_issued,sign_ins' });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('configuration error: IDP_AUDIT_LOG_EXCLUDE names an event type that does not exist: sign_ins');
    });
  });
}

eventsSuite('idp events on the embedded database', async () => ({ env: {}, drop: async () => {} }));

describe.runIf(postgresAvailable)('on PostgreSQL', () => {
  eventsSuite('idp events on PostgreSQL', async () => {
    const db: TestDatabase = await createTestDatabase();
    return { env: { DATABASE_URL: db.url }, drop: () => db.drop() };
  });
});
