/**
 * Calls made close together, run as one statement. Under load, one round trip then serves many
 * requests: on a small machine the write to a database backend and its wake-up cost more than
 * a primary-key lookup, and they are paid once per statement, not per row.
 */

const MAX_BATCH = 100;

/**
 * Statements of one kind in flight at once, by default. While they are out, calls wait and go
 * together in the next one, so a batch grows with the load by itself (as a group commit does):
 * at rest a call goes out at the next turn of the event loop; under load, a few statements
 * serve everything that came in meanwhile instead of one statement per turn.
 */
const MAX_IN_FLIGHT = 2;

interface Waiting<I, R> {
  input: I;
  resolve(result: R): void;
  reject(error: unknown): void;
}

/**
 * `run` takes the inputs of one batch and returns one result per input, in order (an Error for
 * an input that failed on its own). A batch is sent once the current turn's I/O has been
 * handled (setImmediate) if fewer than `maxInFlight` of this kind are out, else when one comes
 * back; at most MAX_BATCH inputs at a time. If `run` throws, every call of the batch fails.
 */
export function batched<I, R>(run: (inputs: I[]) => Promise<Array<R | Error>>, maxInFlight = MAX_IN_FLIGHT): (input: I) => Promise<R> {
  let waiting: Array<Waiting<I, R>> = [];
  let inFlight = 0;
  let scheduled = false;
  const settled = () => {
    inFlight -= 1;
    if (waiting.length > 0) schedule();
  };
  const send = (batch: Array<Waiting<I, R>>) => {
    inFlight += 1;
    run(batch.map((w) => w.input)).then(
      (results) => {
        settled();
        batch.forEach((w, i) => (results[i] instanceof Error ? w.reject(results[i]) : w.resolve(results[i] as R)));
      },
      (error: unknown) => {
        settled();
        batch.forEach((w) => w.reject(error));
      },
    );
  };
  const flush = () => {
    scheduled = false;
    while (waiting.length > 0 && inFlight < maxInFlight) {
      const batch = waiting.length <= MAX_BATCH ? waiting : waiting.slice(0, MAX_BATCH);
      waiting = waiting.length <= MAX_BATCH ? [] : waiting.slice(MAX_BATCH);
      send(batch);
    }
  };
  function schedule() {
    if (scheduled || inFlight >= maxInFlight) return;
    scheduled = true;
    setImmediate(flush);
  }
  return (input) => new Promise<R>((resolve, reject) => {
    waiting.push({ input, resolve, reject });
    schedule();
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
