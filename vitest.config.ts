import { defineConfig } from 'vitest/config';
import { LongestFirstSequencer } from './test/sequencer.ts';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // A safety net for a hang, not a measure: every wait of the suite ends on the event it awaits
    // (a port answering, a line written, a process exiting) and fails at once when that has
    // failed, so a busy machine makes the run slower, never red. Above test/helpers/waits.ts's
    // HANG_LIMIT_MS, so that a hung wait reports what it waited for.
    testTimeout: 300_000,
    hookTimeout: 300_000,
    // e2e suites spawn servers; two cores, so keep file parallelism modest.
    maxWorkers: 2,
    // Longest first (test/durations.json where vitest has no durations of its own), so that the
    // two workers end together instead of one running a long file alone at the end.
    sequence: { sequencer: LongestFirstSequencer },
    // Names the run and drops its template database at the end (test/helpers/services.ts).
    globalSetup: ['test/global-setup.ts'],
    reporters: ['default'],
  },
});
