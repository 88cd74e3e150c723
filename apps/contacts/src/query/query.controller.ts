import { ServiceConfig } from '@crm/common';
import { Ops, RecordQueryDto } from '@crm/contracts';
import { Handles, queryBudgetMs, runRecordQuery, SERVICE_CONFIG } from '@crm/runtime';
import { Controller, Inject } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { DataSource } from 'typeorm';
import { CONTACTS_SETTINGS, ContactsSettings } from '../contacts.settings';
import { QueryableObject, QueryCatalogs } from './query-catalogs';

/** `POST /<object>/query` for the objects this service keeps (docs/query.md). */
@Controller()
export class QueryController {
  constructor(
    private readonly catalogs: QueryCatalogs,
    private readonly dataSource: DataSource,
    @Inject(SERVICE_CONFIG) private readonly config: ServiceConfig,
    @Inject(CONTACTS_SETTINGS) private readonly settings: ContactsSettings,
  ) {}

  private async run(object: QueryableObject, query: RecordQueryDto) {
    const timeoutMs = queryBudgetMs(this.settings.queryTimeoutMs, this.config.rpcTimeoutMs);
    return runRecordQuery(this.dataSource, await this.catalogs.of(object), query, { timeoutMs });
  }

  @Handles(Ops.contacts.query)
  contacts(@Payload('body') query: RecordQueryDto) {
    return this.run('contacts', query);
  }

  @Handles(Ops.companies.query)
  companies(@Payload('body') query: RecordQueryDto) {
    return this.run('companies', query);
  }

  @Handles(Ops.users.query)
  users(@Payload('body') query: RecordQueryDto) {
    return this.run('users', query);
  }

  @Handles(Ops.activities.query)
  activities(@Payload('body') query: RecordQueryDto) {
    return this.run('activities', query);
  }

  @Handles(Ops.tasks.query)
  tasks(@Payload('body') query: RecordQueryDto) {
    return this.run('tasks', query);
  }
}
