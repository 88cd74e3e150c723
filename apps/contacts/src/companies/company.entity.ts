import { Column, Entity, PrimaryColumn } from 'typeorm';
import { BuiltInRecord } from '@crm/records';

@Entity({ name: 'companies' })
export class Company extends BuiltInRecord {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ type: 'text' })
  name!: string;

  @Column({ type: 'text', nullable: true })
  domain!: string | null;

  @Column({ type: 'text', nullable: true })
  industry!: string | null;
}
