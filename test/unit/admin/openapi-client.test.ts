/**
 * A client generated from the administration API's OpenAPI document type-checks: openapi-typescript
 * makes the types of every path, request and answer from the document as the API serves it, and
 * TypeScript compiles a small program using them (strict), which reads answers as a client would
 * and must fail to read what the document says is not there.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ADMIN_OPERATIONS } from '../../../src/routes/admin/operations.ts';
import { openApiDocument } from '../../../src/routes/admin/openapi.ts';

const CLIENT_PROGRAM = `
import type { components, paths } from './admin-api.js';

type Schemas = components['schemas'];
type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;

export const firstSub = (page: Json<paths['/users']['get']['responses'][200]>): string | undefined => page.items[0]?.sub;
export const nextCursor = (page: Schemas['ClientPage']): string | null => page.next_cursor;
export const created: NonNullable<paths['/clients']['post']['requestBody']>['content']['application/json'] = {
  client_id: 'ci-staging', grant_types: ['client_credentials'], scopes: ['orders.read'], public: false,
};
export const locked: paths['/users/{id}']['patch']['requestBody']['content']['application/merge-patch+json'] = { locked: true, email: null };
export const userPath: paths['/users/{id}']['get']['parameters']['path'] = { id: 'the-sub' };
export const newSecret = (answer: Json<paths['/clients/{client_id}/secret']['post']['responses'][200]>): string => answer.client_secret;
export const keyState = (key: Schemas['SigningKey']): 'next' | 'current' | 'previous' | 'retired' => key.state;
export const wrongFields = (problem: Schemas['Problem']): string[] =>
  (problem.errors ?? []).map((field) => ('pointer' in field ? field.pointer : field.parameter));
export const attempts = (page: Json<paths['/webhooks/{id}/deliveries']['get']['responses'][200]>): Array<number | null> => page.items.map((a) => a.status);
export const refused: Schemas['Problem'] = { type: 'about:blank', title: 'Not Found', status: 404, detail: 'no such client' };

// @ts-expect-error a client is never shown with its secret's hash
export const hash = (client: Schemas['Client']) => client.secret_hash;
// @ts-expect-error a signing key's JWK has no private member
export const privateExponent = (key: Schemas['SigningKey']) => key.public_jwk.d;
// @ts-expect-error a listed endpoint never holds its secret (only the answers that make one do)
export const webhookSecret = (hook: Schemas['Webhook']) => hook.secret;
`;

describe('a client generated from the OpenAPI document', () => {
  it('type-checks (openapi-typescript, then tsc in strict mode), and refuses members the document does not have', async () => {
    const document = openApiDocument(ADMIN_OPERATIONS, { serverUrl: 'https://id.example/admin/v1', tokenUrl: 'https://id.example/connect/token' });
    const dir = await mkdtemp(join(tmpdir(), 'idp-openapi-client-'));
    try {
      const types = astToString(await openapiTS(document as unknown as OpenAPI3, { silent: true }));
      await writeFile(join(dir, 'admin-api.ts'), types);
      await writeFile(join(dir, 'client.ts'), CLIENT_PROGRAM);
      const started = performance.now();
      const program = ts.createProgram([join(dir, 'client.ts')], {
        strict: true, noEmit: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext,
        noUncheckedIndexedAccess: true, types: [], lib: ['lib.es2022.d.ts'],
      });
      const problems = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      expect(problems).toEqual([]);
      // What the type check costs, for whoever wonders why this test takes its time.
      expect(performance.now() - started).toBeLessThan(60_000);
      expect(types).toContain('"/users/{id}"');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
