import { validateInput } from '@crm/common';
import {
  CreateDealDto,
  ImportDealsBatchReply,
  ImportDealsBatchRequest,
  ImportObject,
  importRowBody,
  ImportRowError,
  RequestContext,
  SlugKeptBy,
} from '@crm/contracts';
import { BatchRunner, BatchWriter, BuiltInCustomFieldsService, CreateItem, importRowErrors } from '@crm/records';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DealsBatchWriter } from '../deals/deals.batch';

function refusal(line: number, err: unknown): ImportRowError[] {
  const refused = importRowErrors(line, err);
  if (!refused) throw err;
  return refused;
}

/**
 * Applies the deal rows of an import, a batch per call, through the deals' writer as one create of every
 * readable row (same validation, custom field checks and events as POST /deals). The batch's outcome is stored in the same
 * transaction under (import, first row), so the import job, asking again after a failure on its side, gets
 * the stored outcome and no row is created twice.
 */
@Injectable()
export class DealImportsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly batches: BatchRunner,
    private readonly writer: DealsBatchWriter,
    private readonly customFields: BuiltInCustomFieldsService,
  ) {}

  /** The create class and writer of each importable object this service keeps; one without an entry does not compile. */
  private get imported(): Record<ImportObject & SlugKeptBy<'deals'>, { body: new () => object; writer: BatchWriter<object, object, unknown> }> {
    return { deals: { body: CreateDealDto, writer: this.writer as BatchWriter<object, object, unknown> } };
  }

  async applyBatch(ctx: RequestContext, batch: ImportDealsBatchRequest): Promise<ImportDealsBatchReply> {
    return this.dataSource.transaction(async (m) => {
      // Serialises two attempts at the same batch: the second waits, then finds the first's outcome.
      await m.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`crm.import_batch.${batch.import_id}.${batch.first_seq}`]);
      const [done] = (await m.query(`SELECT result FROM import_batches WHERE import_id = $1 AND first_seq = $2`, [batch.import_id, batch.first_seq])) as Array<{
        result: ImportDealsBatchReply;
      }>;
      if (done) return done.result;
      const object = batch.object ?? 'deals';
      if (!Object.hasOwn(this.imported, object)) throw new Error(`the deals service imports no '${object}'`);
      const { body, writer } = this.imported[object];
      const custom = (await this.customFields.state(m, object)).fields;
      const result: ImportDealsBatchReply = { created: 0, failed: 0, errors: [] };
      const errors = new Map<number, ImportRowError[]>();
      const items: CreateItem<object>[] = [];
      batch.rows.forEach((row, index) => {
        try {
          items.push({ index, body: validateInput(body, importRowBody(object, batch.format, row.values, custom), 'row') });
        } catch (err) {
          errors.set(index, refusal(row.line, err));
        }
      });
      for (const outcome of await this.batches.apply(m, ctx, writer, { create: items })) {
        if (outcome.error) errors.set(outcome.index, refusal(batch.rows[outcome.index].line, outcome.error));
        else result.created++;
      }
      for (const index of [...errors.keys()].sort((a, b) => a - b)) {
        result.failed++;
        result.errors.push(...errors.get(index)!);
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
