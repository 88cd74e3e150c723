import { findByIds, Logger } from '@crm/common';
import { FullDealView, RelatedSummary, RequestContext, ResolveContactsReply } from '@crm/contracts';
import { LOGGER } from '@crm/runtime';
import { Inject, Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Pipeline } from '../pipelines/pipeline.entity';
import { Stage } from '../pipelines/stage.entity';
import { ContactsDirectory } from './contacts-directory';
import { Deal } from './deal.entity';
import { presentDeal } from './deal.presenter';

export interface FullDealResponse {
  data: FullDealView;
  included: RelatedSummary[];
}

/** `{data, included}`: what GET and PATCH /deals/:id answer, the related summaries beside the deal. */
export function withIncluded(data: FullDealView): FullDealResponse {
  const { contact, company, owner } = data.relationships;
  return { data, included: [contact, company, owner].filter((r): r is RelatedSummary => r !== null) };
}

/** The full deal (with its relationships) as every read and write of one answers it. */
@Injectable()
export class DealViews {
  constructor(
    private readonly directory: ContactsDirectory,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /**
   * Full views of many deals: one request for their contacts, companies and owners, one read of their
   * pipelines and one of their stages. A read or a write that already happened should not fail because the
   * contacts service is briefly away: then the summaries carry the id with an empty name, and it is logged.
   * An owner deleted since keeps its id with an empty name. `known`: stages the write already read (the
   * one a deal moved to), not read again.
   */
  async full(m: EntityManager, ctx: RequestContext, deals: Deal[], now = new Date(), known: readonly Stage[] = []): Promise<Map<string, FullDealView>> {
    if (!deals.length) return new Map();
    const ids = (pick: (d: Deal) => string | null) => [...new Set(deals.map(pick).filter((id): id is string => id !== null))];
    const [names, pipelines, read] = await Promise.all([
      this.names(ctx, { contact_ids: ids((d) => d.contactId), company_ids: ids((d) => d.companyId), user_ids: ids((d) => d.ownerId) }),
      findByIds(
        m,
        Pipeline,
        ids((d) => d.pipelineId),
      ),
      findByIds(
        m,
        Stage,
        ids((d) => (known.some((s) => s.id === d.stageId) ? null : d.stageId)),
      ),
    ]);
    const stages = [...known, ...read];
    const summary = (list: RelatedSummary[] | undefined, type: RelatedSummary['type'], id: string | null): RelatedSummary | null => {
      if (id === null) return null;
      // Without an answer every named record keeps its id; with one, a contact or company not found is gone.
      if (!list) return { type, id, name: '' };
      return list.find((r) => r.id === id) ?? (type === 'user' ? { type, id, name: '' } : null);
    };
    return new Map(
      deals.map((deal) => [
        deal.id,
        {
          ...presentDeal(deal, now),
          relationships: {
            contact: summary(names?.contacts, 'contact', deal.contactId),
            company: summary(names?.companies, 'company', deal.companyId),
            pipeline: { type: 'pipeline', id: deal.pipelineId, name: pipelines.find((p) => p.id === deal.pipelineId)?.name ?? '' },
            stage: { type: 'stage', id: deal.stageId, name: stages.find((s) => s.id === deal.stageId)?.name ?? '' },
            owner: summary(names?.users, 'user', deal.ownerId),
          },
        },
      ]),
    );
  }

  private async names(
    ctx: RequestContext,
    ids: { contact_ids: string[]; company_ids: string[]; user_ids: string[] },
  ): Promise<Required<ResolveContactsReply> | undefined> {
    try {
      return await this.directory.resolveMany(ctx, ids);
    } catch (err) {
      this.logger.warn({ err: (err as Error).message, request_id: ctx.request_id }, 'could not resolve contact and company names');
      return undefined;
    }
  }
}
