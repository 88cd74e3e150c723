import { StartupError } from '@crm/common';
import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { WEBHOOKS_SETTINGS, WebhooksSettings } from '../config/webhooks.settings';
import { SecretDecryptionError, SecretKeyring } from './secret-keyring';

/**
 * Signing secrets as this service stores them: sealed with the current key of WEBHOOKS_SECRET_KEYS.
 * At start-up one stored secret per key id is opened, so a missing or wrong key stops the process with
 * a line naming the variable and the key id, instead of deliveries going out with unusable signatures.
 */
@Injectable()
export class SigningSecrets implements OnModuleInit {
  private readonly keyring: SecretKeyring;

  constructor(
    private readonly dataSource: DataSource,
    @Inject(WEBHOOKS_SETTINGS) settings: WebhooksSettings,
  ) {
    this.keyring = settings.secretKeys;
  }

  async onModuleInit(): Promise<void> {
    const samples = (await this.dataSource.query(
      `SELECT DISTINCT ON (key_id) id, stored FROM (
         SELECT id, stored, split_part(stored, ':', 2) AS key_id FROM (
           SELECT id, secret AS stored FROM subscriptions
           UNION ALL SELECT id, previous_secret FROM subscriptions WHERE previous_secret IS NOT NULL
         ) s WHERE stored NOT LIKE 'whsec\\_%'
       ) sealed ORDER BY key_id, id`,
    )) as { id: string; stored: string }[];
    for (const { id, stored } of samples) {
      try {
        this.keyring.open(id, stored);
      } catch (err) {
        if (err instanceof SecretDecryptionError) throw new StartupError(err.message);
        throw err;
      }
    }
  }

  seal(subscriptionId: string, secret: string): string {
    return this.keyring.seal(subscriptionId, secret);
  }

  /**
   * The secrets a request is signed with: the current one, then the one it replaced while its overlap
   * lasts. Throws a SecretDecryptionError when one does not open.
   */
  signingSecrets(subscriptionId: string, secret: string, previous: string | null, previousValid: boolean): string[] {
    const current = this.open(subscriptionId, secret);
    return previous !== null && previousValid ? [current, this.open(subscriptionId, previous)] : [current];
  }

  /** Throws a SecretDecryptionError (naming the key id, never key material) when the stored value does not open. */
  open(subscriptionId: string, stored: string): string {
    return this.keyring.open(subscriptionId, stored);
  }
}
