/**
 * Embedded (PGlite) databases for tests, migrated once: the first test file that needs one
 * builds a template with every migration applied in the system's temporary directory (PGlite's
 * initdb and the migrations take seconds), and each test copies it (milliseconds).
 */
import { createHash } from 'node:crypto';
import { cpSync, existsSync, readdirSync, readFileSync, renameSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { embeddedDatabasePath } from '../../src/data-dir.ts';
import { openDurableStore } from '../../src/store/sql/durable.ts';
import type { DurableStore } from '../../src/store/types.ts';
import { ROOT, tempDir } from './process.ts';

/**
 * A data directory whose embedded database has every migration applied, made once per set of
 * migrations (and PGlite version). Built aside and renamed into place, so that test files
 * starting at once never see half of it.
 */
export async function migratedTemplate(): Promise<string> {
  const hash = createHash('sha256');
  hash.update(readFileSync(join(ROOT, 'node_modules/@electric-sql/pglite/package.json')));
  const migrations = join(ROOT, 'migrations');
  for (const file of readdirSync(migrations).sort()) hash.update(file).update(readFileSync(join(migrations, file)));
  const template = join(tmpdir(), `idp-test-pglite-${hash.digest('hex').slice(0, 16)}`);
  if (existsSync(template)) return template;
  const building = tempDir('idp-test-pglite-building-');
  try {
    const durable = await openDurableStore({ dataDir: embeddedDatabasePath(building.path) });
    await durable.migrate();
    await durable.close();
    renameSync(building.path, template);
  } catch (error) {
    // Another test file put its template in place first: use that one.
    if (!existsSync(template)) throw error;
  } finally {
    building.remove();
  }
  return template;
}

/** Copies the migrated template's database into `dataDir` (its embedded database's place). */
export async function copyMigratedDatabase(dataDir: string): Promise<void> {
  cpSync(embeddedDatabasePath(await migratedTemplate()), embeddedDatabasePath(dataDir), { recursive: true });
}

/** A migrated embedded database of the test's own; closing it removes its files. */
export async function openMigratedEmbedded(): Promise<DurableStore> {
  const data = tempDir('idp-test-db-');
  try {
    await copyMigratedDatabase(data.path);
    const durable = await openDurableStore({ dataDir: embeddedDatabasePath(data.path) });
    const close = durable.close.bind(durable);
    return Object.assign(durable, {
      async close() {
        await close();
        data.remove();
      },
    });
  } catch (error) {
    data.remove();
    throw error;
  }
}
