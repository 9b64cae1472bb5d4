import { describe, expect, it } from 'vitest';
import { createHostCheck, createManagementHostCheck } from '../../src/routes/shared/host.ts';

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

describe('the management port\'s host check', () => {
  const check = createManagementHostCheck({ host: '0.0.0.0', hosts: ['idp.monitoring.svc'] });
  it.each([
    ['idp-1:9464', true],
    ['localhost', true],
    ['10.0.0.5:9464', true],
    ['[::1]:9464', true],
    ['idp.monitoring.svc:9464', true],
    ['IDP.Monitoring.svc', true],
    ['evil.example:9464', false],
    ['idp.monitoring.svc.evil.example', false],
    ['localhost.:9464', false],
    ['a:b:c', false],
    ['[evil.example]:9464', false],
    ['', false],
  ])('Host %s -> %s', (host, ok) => {
    expect(check(host)).toBe(ok);
  });

  it('accepts the name it listens on, and refuses a request without a host', () => {
    expect(createManagementHostCheck({ host: 'metrics.internal.example', hosts: [] })('metrics.internal.example:9464')).toBe(true);
    expect(check(undefined)).toBe(false);
  });
});
