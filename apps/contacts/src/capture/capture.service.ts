import { canonicalJson, diffFields, hydrate, IdPrefix, newId } from '@crm/common';
import { CaptureContactDto, CaptureView, ContactsLimits, event, EventType } from '@crm/contracts';
import { createdChange, OutboxService, updatedChange } from '@crm/messaging';
import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { Contact } from '../contacts/contact.entity';
import { presentContact, presentContactSummary } from '../contacts/contact.presenter';
import { CONTACT_FIELDS } from '../contacts/contact-rows';
import { NOW_MS } from '@crm/records';
import { Suppressions } from '../privacy/suppressions';

/** The captured fields a capture may fill in; it never overwrites a value already there. */
const FILLABLE = ['first_name', 'last_name', 'source', 'source_detail'] as const;
const FILLABLE_FIELDS = CONTACT_FIELDS.filter((f) => (FILLABLE as readonly string[]).includes(f.api) || f.api === 'metadata');

/** A row deleted between the insert and the lock is rare; a few rounds settle it. */
const ATTEMPTS = 3;

function given(value: unknown): boolean {
  return value !== undefined && value !== null && value !== '';
}

@Injectable()
export class CaptureService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly outbox: OutboxService,
    private readonly suppressions: Suppressions,
  ) {}

  /**
   * Creates the contact of `dto.email`, or fills in what the existing one lacks. The unique index on
   * lower(email) settles concurrent captures of one address: exactly one inserts, the others update.
   */
  async capture(dto: CaptureContactDto): Promise<CaptureView> {
    for (let attempt = 1; ; attempt++) {
      const result = await this.dataSource.transaction((m) => this.captureOnce(m, dto));
      if (result || attempt >= ATTEMPTS) return result ?? this.fail(dto.email);
    }
  }

  private async captureOnce(m: EntityManager, dto: CaptureContactDto): Promise<CaptureView | undefined> {
    // An erased person's suppressed email is neither created nor filled in (docs/privacy.md, "Suppression").
    await this.suppressions.refuse(m, dto.email);
    const id = newId(IdPrefix.Contact);
    const inserted: Record<string, unknown>[] = await m.query(
      `INSERT INTO contacts (id, email, first_name, last_name, source, source_detail, metadata)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT ((lower(email))) DO NOTHING
       RETURNING *`,
      [id, dto.email, dto.first_name || null, dto.last_name || null, dto.source ?? null, dto.source_detail || null, JSON.stringify(dto.metadata ?? {})],
    );
    if (inserted.length) {
      const contact = hydrate(m, Contact, inserted[0]);
      await this.outbox.record(m, {
        events: [event(EventType.ContactCreated, { contact_id: id, email: dto.email, record: presentContactSummary(contact) })],
        changes: [createdChange('contacts', id, presentContact(contact, null, null))],
      });
      return { contact_id: id, created: true };
    }
    const [existing] = await m
      .getRepository(Contact)
      .createQueryBuilder('c')
      .setLock('pessimistic_write')
      .where('lower(c.email) = lower(:email)', { email: dto.email })
      .getMany();
    if (!existing) return undefined; // deleted since the insert saw it: try again
    const { set, changes } = diffFields(existing, this.fill(existing, dto), FILLABLE_FIELDS);
    if (changes.changed.length) {
      await m.update(Contact, { id: existing.id }, { ...set, updatedAt: () => NOW_MS } as QueryDeepPartialEntity<Contact>);
      const record = presentContactSummary(await m.findOneByOrFail(Contact, { id: existing.id }));
      await this.outbox.record(m, {
        events: [event(EventType.ContactUpdated, { contact_id: existing.id, ...changes, record })],
        changes: [updatedChange('contacts', existing.id, changes)],
      });
    }
    return { contact_id: existing.id, created: false };
  }

  /** Empty fields take the captured value; metadata gains the keys it lacks, within the metadata limits. */
  private fill(contact: Contact, dto: CaptureContactDto): Record<string, unknown> {
    const input: Record<string, unknown> = {};
    const current: Record<string, unknown> = {
      first_name: contact.firstName,
      last_name: contact.lastName,
      source: contact.source,
      source_detail: contact.sourceDetail,
    };
    for (const field of FILLABLE) if (!given(current[field]) && given(dto[field])) input[field] = dto[field];
    if (dto.metadata) {
      const metadata = { ...dto.metadata, ...(contact.metadata ?? {}) };
      const fits = Object.keys(metadata).length <= ContactsLimits.metadataKeys && Buffer.byteLength(JSON.stringify(metadata)) <= ContactsLimits.metadataBytes;
      if (fits && canonicalJson(metadata) !== canonicalJson(contact.metadata ?? {})) input.metadata = metadata;
    }
    return input;
  }

  private fail(email: string): never {
    throw new Error(`capture of ${email} kept racing with deletes`);
  }
}
