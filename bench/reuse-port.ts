/**
 * Preloaded into each `idp serve` of the bench (`node --import ./bench/reuse-port.ts bin/idp.js
 * serve`): adds `reusePort: true` (SO_REUSEPORT, Node >= 22.12 / 23.1 on Linux) to the options
 * the service passes to listen(), so several independent instances can bind one port and the
 * kernel spreads incoming connections over them. src/ does not set the option itself (yet):
 * Fastify passes its listen options through to net.Server.listen, so `reusePort: true` in
 * src/main.ts would make this preload unnecessary. See bench/README.md.
 */
import net from 'node:net';

type Listen = (...args: unknown[]) => net.Server;
const original = net.Server.prototype.listen as unknown as Listen;

function withReusePort(this: net.Server, ...args: unknown[]): net.Server {
  const [first] = args;
  if (first !== null && typeof first === 'object' && 'port' in first) {
    args[0] = { ...(first as net.ListenOptions), reusePort: true };
  }
  return original.apply(this, args);
}

net.Server.prototype.listen = withReusePort as unknown as typeof net.Server.prototype.listen;
