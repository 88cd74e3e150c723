import { Module } from '@nestjs/common';
import { DeliveryRetentionJob } from './deliveries/delivery-retention.job';
import { DispatchSignal } from './deliveries/dispatch-signal';
import { DeliveryMetrics } from './deliveries/delivery-metrics';
import { DispatcherService } from './deliveries/dispatcher.service';
import { EventScreen } from './deliveries/event-screen';
import { SubscriptionFilters } from './deliveries/subscription-filters';
import { EventIntakeService } from './event-log/event-intake.service';
import { SigningSecrets } from './secrets/signing-secrets';
import { WebhooksController } from './webhooks/webhooks.controller';
import { WebhooksService } from './webhooks/webhooks.service';

@Module({
  controllers: [WebhooksController],
  providers: [
    SigningSecrets,
    DispatchSignal,
    DeliveryMetrics,
    DeliveryRetentionJob,
    EventIntakeService,
    SubscriptionFilters,
    EventScreen,
    DispatcherService,
    WebhooksService,
  ],
})
export class WebhooksModule {}
