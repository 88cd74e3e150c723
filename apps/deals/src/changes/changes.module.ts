import { ChangeHistoryModule, recordChangesController } from '@crm/records';
import { Module } from '@nestjs/common';
import { DEALS_SETTINGS } from '../deals.settings';
import { ChangesController } from './changes.controller';

@Module({ imports: [ChangeHistoryModule.register(DEALS_SETTINGS)], controllers: [ChangesController, recordChangesController('deals')] })
export class ChangesModule {}
