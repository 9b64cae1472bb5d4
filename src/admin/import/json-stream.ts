/**
 * A JSON file read as a stream of tokens, never whole (a realm export can be gigabytes): the
 * elements of the top-level object's arrays named in `sections` come out one at a time, each
 * assembled on its own, with their place in the file. Everything else is skipped token by token.
 */
import { pipeline, type Readable } from 'node:stream';
import { parser } from 'stream-json';
import Assembler from 'stream-json/assembler.js';

export interface JsonElement {
  section: string;
  index: number;
  value: unknown;
}

type Token = { name: string; value?: unknown };

const VALUE_START = new Set(['startObject', 'startArray', 'stringValue', 'numberValue', 'nullValue', 'trueValue', 'falseValue']);

/** Thrown when the file is not JSON, or not one object at the top: the import stops there. */
export class JsonFileError extends Error {
  override name = 'JsonFileError';
}

export async function* jsonElements(input: Readable, sections: readonly string[]): AsyncGenerator<JsonElement> {
  // Only packed values: the assembler reads those, and streamed chunks would double the tokens.
  const tokens = pipeline(input, parser.asStream({ streamValues: false }), () => {
    // An error reaches the loop below through the stream; nothing to do here.
  });
  let depth = 0;
  let key: string | undefined;
  let section: string | undefined;
  let index = -1;
  let element: Assembler | undefined;
  try {
    for await (const token of tokens as AsyncIterable<Token>) {
      if (element) {
        element.consume(token as never);
        if (element.done) {
          yield { section: section as string, index, value: element.current };
          element = undefined;
        }
        continue;
      }
      if (depth === 0 && token.name !== 'startObject') throw new JsonFileError('the file is not one JSON object (a realm export of one realm)');
      if (section !== undefined && depth === 2 && VALUE_START.has(token.name)) {
        index += 1;
        element = new Assembler();
        element.consume(token as never);
        if (element.done) {
          yield { section, index, value: element.current };
          element = undefined;
        }
        continue;
      }
      if (token.name === 'keyValue' && depth === 1) key = String(token.value);
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
    }
  } catch (error) {
    if (error instanceof JsonFileError) throw error;
    throw new JsonFileError(`the file is not valid JSON: ${(error as Error).message}`);
  }
}
