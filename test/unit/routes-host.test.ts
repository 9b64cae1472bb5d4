import { describe, expect, it } from 'vitest';
import { createHostCheck } from '../../src/routes/shared/host.ts';

describe('the host check', () => {
  it.each([
    ['https://id.example.com', 'id.example.com', true],
    ['https://id.example.com', 'ID.Example.com:443', true],
    ['https://id.example.com', 'id.example.com:8443', false],
    ['https://id.example.com', 'evil.example.com', false],
    ['https://id.example.com/idp', 'id.example.com', true],
    ['http://localhost:3000', '127.0.0.1:3000', true],
    ['http://localhost:3000', '[::1]:3000', true],
    ['http://localhost:3000', 'localhost:3001', false],
    ['http://127.0.0.1:3000', '127.0.0.1', false],
    ['http://id.example.com', 'id.example.com:80', true],
  ])('base %s, Host %s -> %s', (base, host, ok) => {
    expect(createHostCheck(base)(host)).toBe(ok);
  });

  it('refuses a request without a host', () => {
    expect(createHostCheck('https://id.example.com')(undefined)).toBe(false);
  });
});
