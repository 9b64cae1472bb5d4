/** The running version of the service: package.json's, read once. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const SERVICE_VERSION = (JSON.parse(readFileSync(join(import.meta.dirname, '..', 'package.json'), 'utf8')) as { version: string }).version;
