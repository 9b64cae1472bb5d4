/**
 * Events and webhooks, made once per process (services.ts): what is subscribed, the outbox
 * sink that audit events go through beside the log, the address policy of webhook URLs, the
 * keyring of endpoint secrets, and the delivery that `idp serve` starts.
 */
import type { Logger } from 'pino';
import type { Clock } from './clock.ts';
import type { Config } from './config.ts';
import { createAddressPolicy, type AddressPolicy } from './events/addresses.ts';
import { auditsType } from './events/audit-policy.ts';
import { startDelivery, type Delivery } from './events/dispatcher.ts';
import { createOutboxSink, type OutboxSink } from './events/outbox-sink.ts';
import { auditTo, combineSinks, createLogSink } from './events/record.ts';
import { createSigningKeys } from './events/signature.ts';
import { createSubscriptions, type Subscriptions } from './events/subscriptions.ts';
import type { DurableStore } from './store/types.ts';
import { deriveKeyring, type Keyring, type MasterSecrets } from './tokens/secret-box.ts';
import { openWebhookSecret } from './tokens/webhook-secrets.ts';

export interface WebhookServices {
  subscriptions: Subscriptions;
  /** Audit events into the outbox (the audit log), when audited or an enabled endpoint subscribes to their type. */
  outboxSink: OutboxSink;
  addressPolicy: AddressPolicy;
  webhookKeyring: Keyring;
  /** Attempts made by this process, by result (`succeeded` or the error's kind), for the metrics. */
  deliveryResults: Map<string, number>;
  /** Starts delivering (idp serve); returns what stops it. */
  startDelivery(logger: Logger): () => void;
}

export interface WebhookServicesInput {
  config: Config;
  durable: DurableStore;
  secrets: MasterSecrets;
  clock: Clock;
  logger?: Logger | undefined;
}

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

export function createWebhookServices({ config, durable, secrets, clock, logger }: WebhookServicesInput): WebhookServices {
  const subscriptions = createSubscriptions(durable, (error) => logger?.warn({ err: message(error) }, 'webhook subscriptions could not be read'));
  let delivery: Delivery | undefined;
  const audited = auditsType(config.auditLog);
  const outboxSink = createOutboxSink({
    outbox: async () => durable.outbox,
    // An event neither audited nor subscribed (token_issued, by default) costs no round trip.
    subscribed: (type) => audited(type) || subscriptions.has(type),
    delivery: () => delivery,
    clock,
    onError: (error) => logger?.error({ err: message(error) }, 'an event could not be written to the outbox'),
  });
  const addressPolicy = createAddressPolicy({ production: config.production, allowedNetworks: config.webhooks.allowedNetworks });
  const webhookKeyring = deriveKeyring(secrets, 'webhook-secrets');
  const deliveryResults = new Map<string, number>();
  return {
    subscriptions,
    outboxSink,
    addressPolicy,
    webhookKeyring,
    deliveryResults,
    startDelivery(log) {
      const started = startDelivery({
        durable,
        policy: addressPolicy,
        retryScale: config.webhooks.retryScale,
        signingKey: createSigningKeys((endpointId, sealed) => openWebhookSecret(webhookKeyring, endpointId, sealed)),
        audit: auditTo(combineSinks(createLogSink(), outboxSink), { log }),
        clock,
        countResult: (result) => deliveryResults.set(result, (deliveryResults.get(result) ?? 0) + 1),
        onError: (error) => log.warn({ err: message(error) }, 'webhook delivery failed'),
      });
      delivery = started;
      return () => {
        delivery = undefined;
        started.stop();
      };
    },
  };
}
