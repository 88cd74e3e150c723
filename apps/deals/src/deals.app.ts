import { ChangesModule } from './changes/changes.module';
import { recordsRetention } from '@crm/records';
import { dealsTables } from './database/tables';
import { SearchModule } from './search/search.module';
import { ServiceName } from '@crm/contracts';
import { RunningService, ServiceDefinition, startService } from '@crm/runtime';
import { dealsEntities, dealsMigrations } from './database';
import { DealsModule } from './deals.module';
import { DEALS_SETTINGS, loadDealsSettings } from './deals.settings';
import { DealsErasureModule } from './privacy/deals-erasure';

export const dealsApp: ServiceDefinition = {
  service: ServiceName.Deals,
  defaultHealthPort: 3002,
  database: { entities: dealsEntities, migrations: dealsMigrations },
  retention: { tables: dealsTables, settings: recordsRetention },
  imports: [DealsModule, ChangesModule, SearchModule, DealsErasureModule],
  settings: { token: DEALS_SETTINGS, load: loadDealsSettings },
};

export function startDeals(env?: Record<string, string | undefined>): Promise<RunningService> {
  return startService(dealsApp, env);
}
