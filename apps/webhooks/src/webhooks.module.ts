import { Module } from '@nestjs/common';
import { DispatchSignal } from './deliveries/dispatch-signal';
import { DispatcherService } from './deliveries/dispatcher.service';
import { EventIntakeService } from './event-log/event-intake.service';
import { WebhooksHandler } from './webhooks/webhooks.handler';
import { WebhooksService } from './webhooks/webhooks.service';

@Module({
  providers: [DispatchSignal, EventIntakeService, DispatcherService, WebhooksService, WebhooksHandler],
})
export class WebhooksModule {}
