import { AnyOperation, Ops } from '@crm/contracts';
import { Module } from '@nestjs/common';
import { forwardingController } from './forwarding-controller';
import { ServiceForwarder } from './service-forwarder';

/** The groups of the operation table clients reach over HTTP, in the table's order, which is the order their routes are documented in. */
const FORWARDED = Object.entries(Ops as Record<string, Record<string, AnyOperation>>).filter(([, group]) => Object.values(group).some((op) => op.http));

/** Every route the gateway forwards to the service that owns it, generated from the operation table. */
@Module({
  controllers: FORWARDED.map(([name, group]) => forwardingController(name, group)),
  providers: [ServiceForwarder],
})
export class ResourcesModule {}
