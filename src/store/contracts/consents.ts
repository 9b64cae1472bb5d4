/** Users' consents to clients. */

export interface ConsentRepository {
  /** Scopes the user has consented to for the client (empty when none). */
  get(userId: string, clientId: string): Promise<string[]>;
  /** Records consent to these scopes, adding to what was consented before. */
  grant(userId: string, clientId: string, scopes: string[]): Promise<void>;
  revoke(userId: string, clientId: string): Promise<void>;
  /** The user's consents, by client id. */
  listForUser(userId: string): Promise<Array<{ clientId: string; scopes: string[]; grantedAt: Date }>>;
}
