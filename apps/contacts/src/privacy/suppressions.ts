import { DomainError } from '@crm/contracts';
import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { createHmac, randomBytes } from 'crypto';
import { DataSource, EntityManager } from 'typeorm';
import { CONTACTS_SETTINGS, ContactsSettings } from '../contacts.settings';

/** A suppressed email's refusal: `409 conflict`, `details[0].code` `suppressed`; the email is not repeated. */
export function suppressedEmail(field = 'email'): DomainError {
  const message =
    'This email address belongs to a person erased at their request and may not be stored again until the suppression is lifted (docs/privacy.md).';
  return DomainError.conflict(message, [{ field, code: 'suppressed', message }]);
}

/**
 * The keyed hash of an email (receipts, erasure subjects, suppressions) and the suppressed emails
 * (docs/privacy.md, "Suppression"): an erasure with `suppress` keeps the hash, and every write that would
 * store the email again (create, upsert, batch, capture, import, an email change) is refused.
 */
@Injectable()
export class Suppressions implements OnApplicationBootstrap {
  private hmacKey?: string;

  constructor(
    private readonly dataSource: DataSource,
    @Inject(CONTACTS_SETTINGS) private readonly settings: ContactsSettings,
  ) {}

  /**
   * The key is read (or made and kept) at start: asked for first inside a write's transaction, it took a
   * second pooled session while the first was held, and concurrent batches waited on each other's sessions.
   */
  async onApplicationBootstrap(): Promise<void> {
    await this.key(this.dataSource);
  }

  /** The keyed hash of an email: the deployment's PRIVACY_HMAC_KEY, or a key made once and kept. */
  async emailHmac(email: string, runner: Pick<EntityManager, 'query'> = this.dataSource): Promise<string> {
    return createHmac('sha256', await this.key(runner))
      .update(email.trim().toLowerCase())
      .digest('hex');
  }

  private async key(runner: Pick<EntityManager, 'query'>): Promise<string> {
    if (!this.hmacKey) {
      const configured = this.settings.privacyHmacKey;
      if (configured) this.hmacKey = configured;
      else {
        await runner.query(`INSERT INTO privacy_keys (hmac_key) VALUES ($1) ON CONFLICT DO NOTHING`, [randomBytes(32).toString('base64')]);
        const [{ hmac_key }]: Array<{ hmac_key: string }> = await runner.query(`SELECT hmac_key FROM privacy_keys`);
        this.hmacKey = hmac_key;
      }
    }
    return this.hmacKey;
  }

  /** Which of `emails` are suppressed, lower-cased; one look-up whatever their number. */
  async suppressed(m: EntityManager, emails: readonly string[]): Promise<Set<string>> {
    const distinct = [...new Set(emails.map((e) => e.trim().toLowerCase()))];
    if (!distinct.length) return new Set();
    const byHash = new Map<string, string>();
    for (const email of distinct) byHash.set(await this.emailHmac(email, m), email);
    const rows: Array<{ email_hmac: string }> = await m.query(`SELECT email_hmac FROM suppressions WHERE email_hmac = ANY($1::text[])`, [[...byHash.keys()]]);
    return new Set(rows.map((r) => byHash.get(r.email_hmac)!));
  }

  /** Refuses a write that would store a suppressed email. */
  async refuse(m: EntityManager, email: string | null | undefined): Promise<void> {
    if (typeof email === 'string' && (await this.suppressed(m, [email])).size) throw suppressedEmail();
  }

  /** Keeps the hash (idempotent: the first erasure that suppressed it stays named). */
  async suppress(m: EntityManager, emailHmac: string, erasureId: string): Promise<void> {
    await m.query(`INSERT INTO suppressions (email_hmac, erasure_id) VALUES ($1, $2) ON CONFLICT (email_hmac) DO NOTHING`, [emailHmac, erasureId]);
  }

  /** Lifts a suppression by the email's hash; `404` when none is kept under it. */
  async lift(emailHmac: string): Promise<void> {
    const [{ lifted }]: Array<{ lifted: number }> = await this.dataSource.query(
      `WITH lifted AS (DELETE FROM suppressions WHERE email_hmac = $1 RETURNING 1) SELECT count(*)::int AS lifted FROM lifted`,
      [emailHmac],
    );
    if (!lifted) throw DomainError.notFound('suppression', emailHmac);
  }
}
