import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The secret a PATCH replaced, kept (encrypted like the current one) until previous_secret_expires_at so
 * deliveries in between carry a signature with each.
 */
export class AddPreviousSecret1764100000100 implements MigrationInterface {
  name = 'AddPreviousSecret1764100000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE subscriptions
        ADD COLUMN previous_secret text,
        ADD COLUMN previous_secret_expires_at timestamptz,
        ADD CONSTRAINT subscriptions_previous_secret_expiry CHECK ((previous_secret IS NULL) = (previous_secret_expires_at IS NULL))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE subscriptions DROP COLUMN previous_secret_expires_at, DROP COLUMN previous_secret`);
  }
}
