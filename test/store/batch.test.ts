import { describe, expect, it } from 'vitest';
import { batched } from '../../src/store/sql/batch.ts';

/** A statement that answers only when told to: which batches ran. */
function controlledStatement() {
  const runs: number[][] = [];
  const pending: Array<() => void> = [];
  const run = (inputs: number[]) => {
    runs.push(inputs);
    return new Promise<Array<number | Error>>((resolve) => pending.push(() => resolve(inputs.map((n) => (n < 0 ? new Error('negative') : n * 2)))));
  };
  const answerAll = () => pending.splice(0).forEach((answer) => answer());
  return { run, runs, answerAll };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('batched', () => {
  it('runs the calls of one turn as one batch, and each call gets its own result', async () => {
    const { run, runs, answerAll } = controlledStatement();
    const call = batched(run);
    const results = Promise.allSettled([call(1), call(-1), call(3)]);
    await turn();
    answerAll();
    expect(runs).toEqual([[1, -1, 3]]);
    expect((await results).map((r) => (r.status === 'fulfilled' ? r.value : 'failed'))).toEqual([2, 'failed', 6]);
  });

  it('holds calls while as many batches as allowed are out, then sends them together', async () => {
    const { run, runs, answerAll } = controlledStatement();
    const call = batched(run, 1);
    const first = call(1);
    await turn();
    const later = [call(2), call(3)];
    await turn();
    await turn();
    expect(runs).toEqual([[1]]);
    answerAll();
    expect(await first).toBe(2);
    await turn();
    expect(runs).toEqual([[1], [2, 3]]);
    answerAll();
    expect(await Promise.all(later)).toEqual([4, 6]);
  });

  it('fails every call of a batch whose statement fails, and goes on with the next', async () => {
    let fail = true;
    const call = batched(async (inputs: number[]) => {
      if (fail) throw new Error('down');
      return inputs;
    }, 1);
    await expect(call(1)).rejects.toThrow('down');
    fail = false;
    expect(await call(2)).toBe(2);
  });
});
