import { AnyOperation, Ops } from '@crm/contracts';
import { Module } from '@nestjs/common';
import { forwardingController } from './forwarding-controller';
import { ServiceForwarder } from './service-forwarder';

/** The groups of the operation table clients reach over HTTP, in the order their routes are documented. */
const FORWARDED = [
  'contacts',
  'companies',
  'users',
  'imports',
  'activities',
  'tasks',
  'deals',
  'pipelines',
  'events',
  'changes',
  'webhooks',
  'schema',
  'capture',
  'objects',
  'search',
  'duplicates',
] as const;

/** Every route the gateway forwards to the service that owns it, generated from the operation table. */
@Module({
  controllers: FORWARDED.map((group) => forwardingController(group, Ops[group] as Record<string, AnyOperation>)),
  providers: [ServiceForwarder],
})
export class ResourcesModule {}
