import { BuiltInRecord } from '@crm/records';
import { Column } from 'typeorm';

/**
 * Activities and tasks: work on a contact, a deal, both or neither. A removed contact or deal takes the
 * work that was only its own and unlinks the rest (see WorkLinks).
 */
export abstract class WorkItemRecord extends BuiltInRecord {
  @Column({ name: 'contact_id', type: 'text', nullable: true })
  contactId!: string | null;

  @Column({ name: 'deal_id', type: 'text', nullable: true })
  dealId!: string | null;
}
