import { ERASURE_LEDGER_MIGRATIONS } from '@crm/runtime';
import { OUTBOX_MIGRATIONS } from '@crm/messaging';
import { Delivery } from '../deliveries/delivery.entity';
import { WebhookEvent } from '../event-log/webhook-event.entity';
import { SecretKeyring } from '../secrets/secret-keyring';
import { Subscription } from '../webhooks/subscription.entity';
import { CreateWebhooks1763800000600 } from './migrations/1763800000600-create-webhooks';
import { AddIntakeCheckpoint1763800000700 } from './migrations/1763800000700-add-intake-checkpoint';
import { encryptSigningSecrets } from './migrations/1764100000000-encrypt-signing-secrets';
import { AddPreviousSecret1764100000100 } from './migrations/1764100000100-add-previous-secret';
import { IndexDeliveriesCreatedAt1764100000200 } from './migrations/1764100000200-index-deliveries-created-at';
import { AddEventTraceContext1764200000100 } from './migrations/1764200000100-add-event-trace-context';
import { AddDeliveryFunctions1764800000000 } from './migrations/1764800000000-add-delivery-functions';
import { AddIntakeAndClaimFunctions1764900000000 } from './migrations/1764900000000-add-intake-and-claim-functions';
import { AddSubscriptionFilters1765000000000 } from './migrations/1765000000000-add-subscription-filters';
import { ClaimScreenedSubscriptions1765100000000 } from './migrations/1765100000000-claim-screened-subscriptions';
import { AddIntakeCheckpointStream1766000000300 } from './migrations/1766000000300-add-intake-checkpoint-stream';

export const webhooksEntities = [Subscription, Delivery, WebhookEvent];

/** The migrations in order; the one that encrypts stored secrets needs the operator's keyring. */
export function webhooksMigrations(keyring: SecretKeyring): Function[] {
  return [
    ...OUTBOX_MIGRATIONS,
    CreateWebhooks1763800000600,
    AddIntakeCheckpoint1763800000700,
    encryptSigningSecrets(keyring),
    AddPreviousSecret1764100000100,
    IndexDeliveriesCreatedAt1764100000200,
    AddEventTraceContext1764200000100,
    AddDeliveryFunctions1764800000000,
    AddIntakeAndClaimFunctions1764900000000,
    AddSubscriptionFilters1765000000000,
    ClaimScreenedSubscriptions1765100000000,
    AddIntakeCheckpointStream1766000000300,
    ...ERASURE_LEDGER_MIGRATIONS,
  ];
}
