/**
 * A JSON file read as a stream of tokens, never whole (a realm export can be gigabytes): the
 * elements of the top-level object's arrays named in `sections` come out one at a time, each
 * assembled on its own, with their place in the file. Everything else is skipped token by
 * token. The tokenizer runs synchronously on each chunk read (a promise per token would cost
 * more than the parsing).
 */
import type { Readable } from 'node:stream';
import { getManyValues, isMany, none } from 'stream-chain/defs.js';
import { jsonParser } from 'stream-json/parser.js';
import Assembler from 'stream-json/assembler.js';

export interface JsonElement {
  section: string;
  index: number;
  value: unknown;
}

type Token = Parameters<Assembler['consume']>[0];

const VALUE_START = new Set(['startObject', 'startArray', 'stringValue', 'numberValue', 'nullValue', 'trueValue', 'falseValue']);

/** Thrown when the file is not JSON, or not one object at the top: the import stops there. */
export class JsonFileError extends Error {
  override name = 'JsonFileError';
}

/** Follows the tokens: where they are in the file, and the element being assembled. */
function createElementReader(sections: readonly string[]) {
  let depth = 0;
  let key: string | undefined;
  let section: string | undefined;
  let index = -1;
  let element: Assembler | undefined;
  const finished = (out: JsonElement[]) => {
    if (!element?.done) return;
    out.push({ section: section as string, index, value: element.current });
    element = undefined;
  };
  return (token: Token, out: JsonElement[]) => {
    if (element) {
      element.consume(token);
      finished(out);
      return;
    }
    if (depth === 0 && token.name !== 'startObject') throw new JsonFileError('the file is not one JSON object (a realm export of one realm)');
    if (section !== undefined && depth === 2 && VALUE_START.has(token.name)) {
      index += 1;
      element = new Assembler();
      element.consume(token);
      finished(out);
    } else if (token.name === 'keyValue' && depth === 1) key = String(token.value);
    else if (token.name === 'startObject' || token.name === 'startArray') {
      depth += 1;
      if (depth === 2 && token.name === 'startArray' && key !== undefined && sections.includes(key)) {
        section = key;
        index = -1;
      }
    } else if (token.name === 'endObject' || token.name === 'endArray') {
      depth -= 1;
      if (depth < 2) section = undefined;
    }
  };
}

export async function* jsonElements(input: Readable, sections: readonly string[]): AsyncGenerator<JsonElement> {
  // Only packed values: the assembler reads those, and streamed chunks would double the tokens.
  const tokenize = jsonParser({ streamValues: false });
  const follow = createElementReader(sections);
  const run = (text: string | typeof none): JsonElement[] => {
    const out: JsonElement[] = [];
    let tokens: unknown;
    try {
      tokens = tokenize(text as string);
    } catch (error) {
      throw new JsonFileError(`the file is not valid JSON: ${(error as Error).message}`);
    }
    if (isMany(tokens)) for (const token of getManyValues(tokens) as Token[]) follow(token, out);
    return out;
  };
  input.setEncoding('utf8');
  let first = true;
  for await (const chunk of input as AsyncIterable<string>) {
    yield* run(first ? chunk.replace(/^\uFEFF/, '') : chunk);
    first = false;
  }
  yield* run(none);
}
