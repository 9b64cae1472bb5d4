/**
 * Calls made in the same turn of the event loop, run as one statement. Under load, one round
 * trip then serves many requests: on a small machine the wake-up of a database backend costs
 * more than a primary-key lookup, and it is paid once per statement, not per row.
 */

const MAX_BATCH = 100;

interface Waiting<I, R> {
  input: I;
  resolve(result: R): void;
  reject(error: unknown): void;
}

/**
 * `run` takes the inputs of one batch and returns one result per input, in order (an Error for
 * an input that failed on its own). A batch is sent once the current turn's I/O has been
 * handled (setImmediate), at most MAX_BATCH inputs at a time; if `run` throws, every call of
 * the batch fails.
 */
export function batched<I, R>(run: (inputs: I[]) => Promise<Array<R | Error>>): (input: I) => Promise<R> {
  let waiting: Array<Waiting<I, R>> = [];
  const send = (batch: Array<Waiting<I, R>>) => {
    run(batch.map((w) => w.input)).then(
      (results) => batch.forEach((w, i) => (results[i] instanceof Error ? w.reject(results[i]) : w.resolve(results[i] as R))),
      (error: unknown) => batch.forEach((w) => w.reject(error)),
    );
  };
  const flush = () => {
    const all = waiting;
    waiting = [];
    for (let i = 0; i < all.length; i += MAX_BATCH) send(all.slice(i, i + MAX_BATCH));
  };
  return (input) => new Promise<R>((resolve, reject) => {
    if (waiting.length === 0) setImmediate(flush);
    waiting.push({ input, resolve, reject });
  });
}

/**
 * Runs a batch as one statement; if that fails and the batch has several inputs, runs each on
 * its own, so that one bad input (or a deadlock between two instances' batches) fails only
 * its own call.
 */
export async function eachOnFailure<I, R>(inputs: I[], statement: (inputs: I[]) => Promise<R[]>): Promise<Array<R | Error>> {
  try {
    return await statement(inputs);
  } catch (error) {
    if (inputs.length === 1) throw error;
    const results: Array<R | Error> = [];
    for (const input of inputs) {
      try {
        results.push(...(await statement([input])));
      } catch (single) {
        results.push(single instanceof Error ? single : new Error(String(single)));
      }
    }
    return results;
  }
}
