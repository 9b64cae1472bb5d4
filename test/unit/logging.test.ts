/**
 * The logger never writes a secret: the values of secret-named keys are replaced wherever they
 * sit in a log object, and nothing else is touched.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { censorSecrets, createLogger } from '../../src/logging.ts';

/** A logger writing into an array of parsed lines. */
function capture(): { lines: Array<Record<string, unknown>>; logger: ReturnType<typeof createLogger> } {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { lines, logger: createLogger('info', stream) };
}

describe('logging', () => {
  it('replaces secrets at the top level and nested, in any letter case, and keeps the rest', () => {
    const { lines, logger } = capture();
    logger.info({
      route: '/connect/token', status: 200, Password: 'hunter2', code: 'the-code',
      body: { client_secret: 'shh', grant_type: 'refresh_token', refresh_token: 'rt' },
      req: { headers: { authorization: 'Basic abc', 'user-agent': 'curl', Cookie: 'idp_session=s' } },
      list: ['token'],
    }, 'request');
    const [line] = lines;
    expect(line).toMatchObject({
      msg: 'request', route: '/connect/token', status: 200, Password: '[redacted]', code: '[redacted]',
      body: { client_secret: '[redacted]', grant_type: 'refresh_token', refresh_token: '[redacted]' },
      req: { headers: { authorization: '[redacted]', 'user-agent': 'curl', Cookie: '[redacted]' } },
      list: ['token'],
    });
    for (const secret of ['hunter2', 'the-code', 'shh', '"rt"', 'Basic abc', 'idp_session=s']) expect(JSON.stringify(lines)).not.toContain(secret);
  });

  it('returns an object without secrets as it is, and never changes the object it was given', () => {
    const clean = { route: '/x', nested: { status: 200 } };
    expect(censorSecrets(clean)).toBe(clean);
    const dirty = { nested: { secret: 's' } };
    expect(censorSecrets(dirty)).toEqual({ nested: { secret: '[redacted]' } });
    expect(dirty.nested.secret).toBe('s');
  });

  it('keeps an error logged under err whole (its message and stack come from the serializer)', () => {
    const { lines, logger } = capture();
    logger.error({ err: new Error('boom') }, 'failed');
    expect(lines[0]).toMatchObject({ err: { message: 'boom', type: 'Error' } });
  });
});
