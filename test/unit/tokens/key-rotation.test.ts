/** The automatic rotation schedule, with the clock moved by hand on a real (embedded) database. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openMigratedEmbedded } from '../../helpers/embedded-database.ts';
import type { DurableStore } from '../../../src/store/types.ts';
import { createKeyManager, type KeyManager, type RotationPolicy } from '../../../src/tokens/keys.ts';

const DAY = 86_400;
const policy: RotationPolicy = { intervalSeconds: 90 * DAY, publishAheadSeconds: 2 * DAY, maxTokenLifetimeSeconds: 3600 };

describe('automatic key rotation', () => {
  let durable: DurableStore;
  let now = Date.parse('2026-01-01T00:00:00Z');
  const clock = () => now;
  const manager = (): KeyManager => createKeyManager({ keys: durable.signingKeys, kek: Buffer.alloc(32, 3), clock });
  const states = async () => (await durable.signingKeys.list()).map((k) => k.state).sort();
  const advance = (seconds: number) => {
    now += seconds * 1000;
  };

  beforeAll(async () => {
    durable = await openMigratedEmbedded();
    await manager().ensureSigningKey();
  });
  afterAll(async () => {
    await durable.close();
  });

  it('does nothing while the current key is young', async () => {
    advance(87 * DAY);
    expect(await manager().maintain(policy)).toStrictEqual({ published: [], promoted: [], retired: [] });
    expect(await states()).toStrictEqual(['current']);
  });

  it('publishes a successor ahead of time, and only one when instances race', async () => {
    advance(1 * DAY + 1);
    const reports = await Promise.all([manager().maintain(policy), manager().maintain(policy), manager().maintain(policy)]);
    expect(reports.flatMap((r) => r.published)).toHaveLength(1);
    expect(await states()).toStrictEqual(['current', 'next']);
    const jwks = await manager().jwks();
    expect(jwks.keys).toHaveLength(2);
  });

  it('keeps signing with the current key until the interval ends', async () => {
    const keys = manager();
    const before = (await keys.signer()).kid;
    advance(2 * DAY - 10);
    expect((await keys.maintain(policy)).promoted).toStrictEqual([]);
    expect((await keys.signer()).kid).toBe(before);
  });

  it('promotes the successor when the interval ends; the old key stays published', async () => {
    const keys = manager();
    const oldKid = (await keys.signer()).kid;
    const nextKid = (await durable.signingKeys.list()).find((k) => k.state === 'next')?.kid;
    advance(20);
    expect((await keys.maintain(policy)).promoted).toStrictEqual([nextKid]);
    expect((await keys.signer()).kid).toBe(nextKid);
    expect((await keys.jwks()).keys.map((k) => k.kid).sort()).toStrictEqual([oldKid, nextKid].sort());
    expect(await states()).toStrictEqual(['current', 'previous']);
  });

  it('retires the old key only after every token it signed has expired', async () => {
    advance(3600);
    expect((await manager().maintain(policy)).retired).toStrictEqual([]);
    advance(301);
    const report = await manager().maintain(policy);
    expect(report.retired).toHaveLength(1);
    expect(await states()).toStrictEqual(['current', 'retired']);
    expect((await manager().jwks()).keys).toHaveLength(1);
  });
});
