/**
 * The service code the floor servers run, imported through this one file: other work moves
 * these modules (client authentication may leave src/grants/), and only the paths here change.
 */
export { authenticateClient, type ClientCredentialsInput } from '../../src/protocol/client-auth.ts';
export { signJwt, verifyJwt } from '../../src/tokens/jwt.ts';
export type { KeyManager } from '../../src/tokens/keys.ts';
export { hashClientSecret, randomToken } from '../../src/tokens/opaque.ts';
export { hashPassword, verifyPassword } from '../../src/sources/passwords.ts';
export type { ClientRecord } from '../../src/store/records.ts';
