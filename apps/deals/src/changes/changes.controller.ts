import { ChangeSliceRequest, Ops, RecordChangesQuery } from '@crm/contracts';
import { Handles } from '@crm/runtime';
import { ChangeLog } from '@crm/records';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { DataSource } from 'typeorm';

/** The change histories of deals and pipelines (docs/changes.md), and this service's slice of GET /changes. */
@Controller()
export class ChangesController {
  constructor(
    private readonly log: ChangeLog,
    private readonly dataSource: DataSource,
  ) {}

  @Handles(Ops.changes.dealsSlice)
  slice(@Payload('body') request: ChangeSliceRequest) {
    return this.log.slice(request);
  }

  @Handles(Ops.deals.changes)
  deal(@Payload('params') { id }: { id: string }, @Payload('query') query: RecordChangesQuery) {
    return this.log.forRecord('deals', id, query, () => this.exists(`SELECT 1 FROM deals WHERE id = $1`, id), 'deal');
  }

  @Handles(Ops.pipelines.changes)
  pipeline(@Payload('params') { id }: { id: string }, @Payload('query') query: RecordChangesQuery) {
    return this.log.forRecord('pipelines', id, query, () => this.exists(`SELECT 1 FROM pipelines WHERE id = $1`, id), 'pipeline');
  }

  private async exists(sql: string, id: string): Promise<boolean> {
    return (await this.dataSource.query(sql, [id])).length > 0;
  }
}
