/** Every operation of the administration API, in the order the OpenAPI document lists them. */
import { CLIENT_OPERATIONS } from './clients.ts';
import { EVENT_OPERATIONS } from './events.ts';
import type { Operation } from './operation.ts';
import { KEY_OPERATIONS, SCOPE_OPERATIONS } from './scopes-keys.ts';
import { SESSION_OPERATIONS } from './sessions.ts';
import { USER_OPERATIONS } from './users.ts';
import { WEBHOOK_OPERATIONS } from './webhooks.ts';

export const ADMIN_OPERATIONS: readonly Operation[] = [...CLIENT_OPERATIONS, ...USER_OPERATIONS, ...SESSION_OPERATIONS, ...SCOPE_OPERATIONS, ...KEY_OPERATIONS, ...WEBHOOK_OPERATIONS, ...EVENT_OPERATIONS];
