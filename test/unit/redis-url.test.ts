import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.ts';
import { describeRedisTarget, parseRedisUrl } from '../../src/store/ephemeral/redis.ts';

describe('Redis URLs', () => {
  it('passes plain and TLS URLs to ioredis as they are', () => {
    expect(parseRedisUrl('redis://cache:6379/2')).toStrictEqual({ kind: 'single', url: 'redis://cache:6379/2' });
    expect(parseRedisUrl('rediss://:pw@cache:6380')).toStrictEqual({ kind: 'single', url: 'rediss://:pw@cache:6380' });
  });

  it('reads Sentinel nodes, the master name, the database and the password', () => {
    expect(parseRedisUrl('redis+sentinel://:s%40cret@s1:26379,s2,s3:26380/idp-master/3')).toStrictEqual({
      kind: 'sentinel',
      nodes: [{ host: 's1', port: 26379 }, { host: 's2', port: 26379 }, { host: 's3', port: 26380 }],
      master: 'idp-master',
      db: 3,
      password: 's@cret',
    });
  });

  it('reads Cluster seed nodes', () => {
    expect(parseRedisUrl('redis+cluster://n1:7000,n2:7001')).toMatchObject({
      kind: 'cluster',
      nodes: [{ host: 'n1', port: 7000 }, { host: 'n2', port: 7001 }],
      password: undefined,
    });
  });
});

/** Through the configuration, as `idp serve` reads REDIS_URL before anything runs. */
describe('REDIS_URL in the configuration', () => {
  it.each([
    'redis://cache:6379/2',
    'rediss://:pw@cache:6380',
    'redis+cluster://127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002',
    'redis+cluster://:s%40cret@n1:7000,n2',
    'redis+sentinel://127.0.0.1:26379,127.0.0.1:26380,127.0.0.1:26381/idpmaster',
    'redis+sentinel://:pw@s1:26379,s2:26379,s3:26379/idp-master/3',
    'redis+sentinel://[::1]:26379,s2/idpmaster',
  ])('accepts %s', (url) => {
    const parsed = parseConfig({ REDIS_URL: url });
    expect(parsed.ok && parsed.config.redisUrl).toBe(url);
  });

  it.each([
    ['http://cache', /scheme/],
    ['redis+cluster://n1:7000,n2:99999', /node "n2:99999"/],
    ['redis+cluster://n1:7000,,n2', /node ""/],
    ['redis+cluster://n1:7000/master', /a cluster URL takes no path/],
    ['redis+sentinel://', /is not redis\+sentinel/],
    ['redis+shard://n1', /is not redis\+sentinel/],
  ])('refuses %s in one line naming the forms', (url, why) => {
    const parsed = parseConfig({ REDIS_URL: url });
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) {
      expect(parsed.message).toMatch(/^configuration error: REDIS_URL must be a URL starting with redis:\/\/, rediss:\/\/, redis\+sentinel:\/\/ or redis\+cluster:\/\/ \(/);
      expect(parsed.message).toMatch(why);
      expect(parsed.message).not.toContain('\n');
    }
  });

  it('refuses what the parser cannot connect to', () => {
    expect(() => parseRedisUrl('redis+cluster://n1:0')).toThrow(/node "n1:0"/);
  });
});

describe('where a Redis URL points, for messages', () => {
  it('names the nodes and the master, never the password', () => {
    expect(describeRedisTarget(parseRedisUrl('redis://:pw@cache:6379/2'))).toBe('Redis at cache:6379');
    expect(describeRedisTarget(parseRedisUrl('redis+cluster://:pw@n1:7000,n2'))).toBe('Redis Cluster at n1:7000,n2:6379');
    expect(describeRedisTarget(parseRedisUrl('redis+sentinel://:pw@[::1]:26379,s2/idpmaster'))).toBe('Redis Sentinel master idpmaster at [::1]:26379,s2:26379');
  });
});
