import { Module } from '@nestjs/common';
import { DispatchSignal } from './deliveries/dispatch-signal';
import { DispatcherService } from './deliveries/dispatcher.service';
import { EventIntakeService } from './event-log/event-intake.service';
import { WebhooksController } from './webhooks/webhooks.controller';
import { WebhooksService } from './webhooks/webhooks.service';

@Module({
  controllers: [WebhooksController], providers: [DispatchSignal, EventIntakeService, DispatcherService, WebhooksService],
})
export class WebhooksModule {}
