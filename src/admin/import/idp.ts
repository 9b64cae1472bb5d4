/**
 * `idp import FILE --format idp`: the seed file's format (users may carry `password_hash`),
 * read as a stream and imported record by record, where `idp seed` takes a file whole.
 */
import type { Readable } from 'node:stream';
import { isObject, pointerOf, stringField, type ImportEntry } from './entries.ts';
import { jsonElements } from './json-stream.ts';

export async function* idpEntries(input: Readable): AsyncGenerator<ImportEntry> {
  for await (const { section, index, value } of jsonElements(input, ['api_scopes', 'clients', 'users'])) {
    const at = pointerOf([section, index]);
    const base = { at, problems: [], origin: {}, notes: [] };
    const record = isObject(value) ? value : {};
    const wrong = isObject(value) ? [] : [{ field: '', message: 'must be an object' }];
    if (section === 'api_scopes') yield { ...base, type: 'api_scope', name: typeof value === 'string' ? value : '?', scope: value };
    else if (section === 'clients') yield { ...base, type: 'client', name: stringField(record, 'client_id') ?? '?', client: record, problems: wrong };
    else yield { ...base, type: 'user', name: stringField(record, 'username') ?? '?', user: record, subject: undefined, problems: wrong };
  }
}
