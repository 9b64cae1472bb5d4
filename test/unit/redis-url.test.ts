import { describe, expect, it } from 'vitest';
import { parseRedisUrl } from '../../src/store/ephemeral/redis.ts';

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
