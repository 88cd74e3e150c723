import { DynamicModule, Module } from '@nestjs/common';
import { ChangeLog } from './change-log';
import { CHANGE_SETTINGS, ChangeRetentionJob } from './change-retention.job';

/**
 * A service's change history: reading it (ChangeLog) and pruning it (ChangeRetentionJob). `settings` is
 * the token of the service's settings, which include ChangeSettings (loadChangeSettings) and, for the
 * budget GET /changes is read under, QuerySettings (loadQuerySettings).
 */
@Module({})
export class ChangeHistoryModule {
  static register(settings: symbol): DynamicModule {
    return {
      module: ChangeHistoryModule,
      providers: [{ provide: CHANGE_SETTINGS, useExisting: settings }, ChangeLog, ChangeRetentionJob],
      exports: [ChangeLog, ChangeRetentionJob],
    };
  }
}
