import { ChangeHistoryModule, recordChangesController } from '@crm/records';
import { Module } from '@nestjs/common';
import { CONTACTS_SETTINGS } from '../contacts.settings';
import { ChangesController } from './changes.controller';

@Module({ imports: [ChangeHistoryModule.register(CONTACTS_SETTINGS)], controllers: [ChangesController, recordChangesController('contacts')] })
export class ChangesModule {}
