/**
 * What openServices (services.ts) opens and makes before the protocol's services, which
 * protocol.ts builds from it: its own module, so that neither imports the other.
 */
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { DerivedServices } from './security.ts';
import type { Mailer } from '../mail/mailer.ts';
import type { MailBrand } from '../mail/messages.ts';
import type { SessionStore } from '../sessions/browser-session.ts';
import type { InteractionStore } from '../sessions/sign-in/interaction.ts';
import type { SignInSource } from '../sources/types.ts';
import type { ClientsCache } from '../store/clients-cache.ts';
import type { CachedUsers } from '../store/users-cache.ts';
import type { DurableStore, EphemeralStore } from '../store/types.ts';
import type { KeyManager } from '../tokens/keys.ts';
import type { RevocationList } from '../tokens/revocation-list.ts';
import type { MasterSecrets } from '../tokens/secret-box.ts';

export interface ServicesBase extends DerivedServices {
  config: Config;
  /** The master secret in force (configured, or generated into the data directory). */
  secret: Buffer;
  /** That secret, which seals, and the previous ones (IDP_SECRET_PREVIOUS), which still open. */
  secrets: MasterSecrets;
  clock: Clock;
  durable: DurableStore;
  ephemeral: EphemeralStore;
  clients: ClientsCache;
  /** Users by id from memory; use it rather than `durable.users` (see store/users-cache.ts). */
  users: CachedUsers;
  keys: KeyManager;
  /** Revoked access tokens, kept in memory on every instance (see tokens/revocation-list.ts). */
  revocations: RevocationList;
  sessions: SessionStore;
  interactions: InteractionStore;
  /** Mail to users (recovery codes, security notices); `available` false when none can be sent. */
  mailer: Mailer;
  /** What every message is signed with (IDP_BRAND_NAME, else the host of IDP_BASE_URL; IDP_BRAND_COLOR): pass it to the composers of mail/messages.ts. */
  mailBrand: MailBrand;
  /** The deployment's sign-in source (one per deployment). */
  source: SignInSource;
  close(): Promise<void>;
}
