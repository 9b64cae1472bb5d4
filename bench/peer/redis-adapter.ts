/**
 * A Redis adapter for node-oidc-provider, after the example adapter of its repository
 * (example/adapters/redis.js): one key per model instance, JSON; consumable models as a hash
 * so that `consume` marks them in place; a list per grant of the keys to drop when it is revoked;
 * the interaction's uid as a pointer key.
 */
import type { Redis } from 'ioredis';
import type { Adapter, AdapterPayload } from 'oidc-provider';

const GRANTABLE = new Set(['AccessToken', 'AuthorizationCode', 'RefreshToken', 'DeviceCode', 'BackchannelAuthenticationRequest']);
const CONSUMABLE = new Set(['AuthorizationCode', 'RefreshToken', 'DeviceCode', 'BackchannelAuthenticationRequest']);

const grantKeyFor = (id: string) => `grant:${id}`;
const userCodeKeyFor = (userCode: string) => `userCode:${userCode}`;
const uidKeyFor = (uid: string) => `uid:${uid}`;

export function redisAdapterClass(redis: Redis): new (name: string) => Adapter {
  return class RedisAdapter implements Adapter {
    private readonly name: string;

    constructor(name: string) {
      this.name = name;
    }

    private key(id: string): string {
      return `${this.name}:${id}`;
    }

    async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
      const key = this.key(id);
      const multi = redis.multi();
      if (CONSUMABLE.has(this.name)) multi.hset(key, { payload: JSON.stringify(payload) });
      else multi.set(key, JSON.stringify(payload));
      if (expiresIn) multi.expire(key, expiresIn);
      if (GRANTABLE.has(this.name) && payload.grantId) {
        const grantKey = grantKeyFor(payload.grantId);
        multi.rpush(grantKey, key);
        // The grant's list lives as long as its longest-lived token.
        const ttl = await redis.ttl(grantKey);
        if (expiresIn > ttl) multi.expire(grantKey, expiresIn);
      }
      if (payload.userCode) multi.set(userCodeKeyFor(payload.userCode), id, 'EX', expiresIn);
      if (payload.uid) multi.set(uidKeyFor(payload.uid), id, 'EX', expiresIn);
      await multi.exec();
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      if (CONSUMABLE.has(this.name)) {
        const data = await redis.hgetall(this.key(id));
        if (!data.payload) return undefined;
        const { payload, ...rest } = data;
        return { ...(rest.consumed ? { consumed: Number(rest.consumed) } : {}), ...(JSON.parse(payload) as AdapterPayload) };
      }
      const data = await redis.get(this.key(id));
      return data ? (JSON.parse(data) as AdapterPayload) : undefined;
    }

    async findByUid(uid: string): Promise<AdapterPayload | undefined> {
      const id = await redis.get(uidKeyFor(uid));
      return id ? this.find(id) : undefined;
    }

    async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      const id = await redis.get(userCodeKeyFor(userCode));
      return id ? this.find(id) : undefined;
    }

    async destroy(id: string): Promise<void> {
      await redis.del(this.key(id));
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      const keys = await redis.lrange(grantKeyFor(grantId), 0, -1);
      const multi = redis.multi();
      for (const key of keys) multi.del(key);
      multi.del(grantKeyFor(grantId));
      await multi.exec();
    }

    async consume(id: string): Promise<void> {
      await redis.hset(this.key(id), 'consumed', Math.floor(Date.now() / 1000));
    }
  };
}
