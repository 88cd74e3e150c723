import { ERASURE_LEDGER_MIGRATIONS } from '@crm/runtime';
import { OUTBOX_MIGRATIONS, CHANGE_HISTORY_MIGRATIONS } from '@crm/messaging';
import { Deal } from '../deals/deal.entity';
import { StageHistory } from '../deals/stage-history.entity';
import { Pipeline } from '../pipelines/pipeline.entity';
import { Stage } from '../pipelines/stage.entity';
import { LineItem } from '../line-items/line-item.entity';
import { Product } from '../products/product.entity';
import {
  BuiltInCustomFields,
  CreateCustomValueFunctions1765700000000,
  CreateSearchFunctions1765200000000,
  CreateSearchWords1765400000000,
  CustomValueFunctionsByPosition1765900000000,
  IndexSearchWordsTrigrams1765800000000,
  SearchPhoneWithoutTrunkZero1767800000100,
} from '@crm/records';
import { CreatePipelinesAndDeals1763800000400 } from './migrations/1763800000400-create-pipelines-and-deals';
import { CustomFields1764300000100 } from './migrations/1764300000100-custom-fields';
import { CreateImportBatches1764300000300 } from './migrations/1764300000300-create-import-batches';
import { IndexDealsCreatedAtAndValue1764400000000 } from './migrations/1764400000000-index-deals-created-at-and-value';
import { CreateDealContacts1764700000000 } from './migrations/1764700000000-create-deal-contacts';
import { IndexDealCustomFields1764500000100 } from './migrations/1764500000100-index-deal-custom-fields';
import { IndexDealSearch1765200000100 } from './migrations/1765200000100-index-deal-search';
import { IndexDealSearchWords1765400000100 } from './migrations/1765400000100-index-deal-search-words';
import { IndexFoldedDealCustomFields1765000000100 } from './migrations/1765000000100-index-folded-deal-custom-fields';
import { DealClosedAtAndReportIndexes1765200000200 } from './migrations/1765200000200-deal-closed-at-and-report-indexes';
import { StageHistoryFlow1765300000100 } from './migrations/1765300000100-stage-history-flow';
import { PipelineReportDealIndexes1765300000200 } from './migrations/1765300000200-pipeline-report-deal-indexes';
import { StageHistoryStayDays1765500000100 } from './migrations/1765500000100-stage-history-stay-days';
import { StageHistoryFlowAppends1765600000100 } from './migrations/1765600000100-stage-history-flow-appends';
import { CreateProductsAndLineItems1768000000000 } from './migrations/1768000000000-create-products-and-line-items';
import { AddDealVersions1768500000100 } from './migrations/1768500000100-add-deal-versions';

export const dealsEntities = [Pipeline, Stage, Deal, StageHistory, Product, LineItem, BuiltInCustomFields];
export const dealsMigrations = [
  ...OUTBOX_MIGRATIONS,
  ...CHANGE_HISTORY_MIGRATIONS,
  CreatePipelinesAndDeals1763800000400,
  CustomFields1764300000100,
  CreateImportBatches1764300000300,
  IndexDealsCreatedAtAndValue1764400000000,
  IndexDealCustomFields1764500000100,
  CreateDealContacts1764700000000,
  IndexFoldedDealCustomFields1765000000100,
  CreateSearchFunctions1765200000000,
  IndexDealSearch1765200000100,
  DealClosedAtAndReportIndexes1765200000200,
  StageHistoryFlow1765300000100,
  PipelineReportDealIndexes1765300000200,
  CreateSearchWords1765400000000,
  IndexDealSearchWords1765400000100,
  StageHistoryStayDays1765500000100,
  StageHistoryFlowAppends1765600000100,
  CreateCustomValueFunctions1765700000000,
  IndexSearchWordsTrigrams1765800000000,
  CustomValueFunctionsByPosition1765900000000,
  SearchPhoneWithoutTrunkZero1767800000100,
  CreateProductsAndLineItems1768000000000,
  ...ERASURE_LEDGER_MIGRATIONS,
  AddDealVersions1768500000100,
];
