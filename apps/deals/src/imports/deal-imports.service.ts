import { validateInput } from '@crm/common';
import { CreateDealDto, ImportDealsBatchReply, ImportDealsBatchRequest, importRowBody, ImportRowError, RequestContext } from '@crm/contracts';
import { BuiltInCustomFieldsService, importRowErrors } from '@crm/runtime';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DealsService } from '../deals/deals.service';

/**
 * Applies the deal rows of an import, a batch per call, each row through the single create (same
 * validation, custom field checks and events) in a savepoint. The batch's outcome is stored in the same
 * transaction under (import, first row), so the import job, asking again after a failure on its side, gets
 * the stored outcome and no row is created twice.
 */
@Injectable()
export class DealImportsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly deals: DealsService,
    private readonly customFields: BuiltInCustomFieldsService,
  ) {}

  async applyBatch(ctx: RequestContext, batch: ImportDealsBatchRequest): Promise<ImportDealsBatchReply> {
    return this.dataSource.transaction(async (m) => {
      // Serialises two attempts at the same batch: the second waits, then finds the first's outcome.
      await m.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`crm.import_batch.${batch.import_id}.${batch.first_seq}`]);
      const [done] = (await m.query(`SELECT result FROM import_batches WHERE import_id = $1 AND first_seq = $2`, [batch.import_id, batch.first_seq])) as Array<{
        result: ImportDealsBatchReply;
      }>;
      if (done) return done.result;
      const custom = (await this.customFields.state(m, 'deals')).fields;
      const result: ImportDealsBatchReply = { created: 0, failed: 0, errors: [] };
      for (const row of batch.rows) {
        try {
          const dto = validateInput(CreateDealDto, importRowBody('deals', batch.format, row.values, custom), 'row');
          await this.deals.create(ctx, dto, m);
          result.created++;
        } catch (err) {
          const refused: ImportRowError[] | undefined = importRowErrors(row.line, err);
          if (!refused) throw err;
          result.failed++;
          result.errors.push(...refused);
        }
      }
      await m.query(`INSERT INTO import_batches (import_id, first_seq, result) VALUES ($1, $2, $3)`, [
        batch.import_id,
        batch.first_seq,
        JSON.stringify(result),
      ]);
      return result;
    });
  }
}
