/**
 * Start-up of a new instance on an existing, migrated database (what an autoscaler does under
 * load): milliseconds from spawning `idp serve` to the first `/readyz` 200, and its peak memory
 * (VmHWM) at that moment. The instance is stopped afterwards.
 */
import { memoryMb, startInstances } from './servers.ts';

export interface StartupReading {
  /** From spawn to the first /readyz 200, ms. */
  readyMs: number;
  /** VmHWM (peak resident memory) of the process when it became ready, MB. */
  peakRssMbAtReady: number;
}

export interface Startup {
  runs: StartupReading[];
  medianReadyMs: number;
  medianPeakRssMbAtReady: number;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)] ?? NaN;

async function readyOnce(env: Record<string, string>, port: number, logDir: string, label: string): Promise<StartupReading> {
  const started = performance.now();
  const instances = await startInstances(1, env, port, logDir, label);
  try {
    for (;;) {
      const status = await fetch(`${instances.url}/readyz`).then((r) => r.status, () => 0);
      if (status === 200) break;
      if (performance.now() - started > 60_000) throw new Error('the instance was not ready within 60 s');
      await new Promise((r) => setTimeout(r, 10));
    }
    return { readyMs: performance.now() - started, peakRssMbAtReady: memoryMb(instances.pids[0] as number, 'VmHWM') };
  } finally {
    await instances.stop();
  }
}

/** `count` start-ups one after the other (the first pays for cold file caches). */
export async function measureStartup(count: number, env: Record<string, string>, port: number, logDir: string): Promise<Startup> {
  const runs: StartupReading[] = [];
  for (let i = 0; i < count; i++) runs.push(await readyOnce(env, port, logDir, `startup-${i + 1}`));
  return { runs, medianReadyMs: median(runs.map((r) => r.readyMs)), medianPeakRssMbAtReady: median(runs.map((r) => r.peakRssMbAtReady)) };
}
