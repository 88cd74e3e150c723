import { createWordIndex, dropWordIndex, searchWords } from '@crm/records';
import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Products and deals' line items (docs/products.md): two new tables, indexed in this transaction while they
 * are empty, and a deal's value_from_line_items, a column with a constant default (no rewrite, no backfill).
 * A line keeps its product's id without a foreign key: deleting a product leaves its lines' name and prices.
 */
export class CreateProductsAndLineItems1768000000000 implements MigrationInterface {
  name = 'CreateProductsAndLineItems1768000000000';

  async up(q: QueryRunner): Promise<void> {
    // Migrations run in a transaction each, so this ends with it.
    await q.query(`SET LOCAL lock_timeout = '5s'`);
    await q.query(`
      CREATE TABLE products (
        id text PRIMARY KEY,
        name text NOT NULL,
        sku text,
        description text,
        price bigint NOT NULL DEFAULT 0 CHECK (price >= 0 AND price <= 9007199254740991),
        currency char(3) NOT NULL DEFAULT 'USD',
        active boolean NOT NULL DEFAULT true,
        metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
        custom_fields jsonb NOT NULL DEFAULT '{}'::jsonb,
        created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now()),
        updated_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now())
      )`);
    await q.query(`CREATE UNIQUE INDEX products_sku ON products (lower(sku))`);
    // The registry's search.columns of products, as they were when this ran.
    await createWordIndex(q, 'products', searchWords(['name', 'sku']));
    await q.query(`
      CREATE TABLE line_items (
        id text PRIMARY KEY,
        deal_id text NOT NULL REFERENCES deals (id) ON DELETE CASCADE,
        product_id text,
        name text NOT NULL,
        quantity numeric(14, 4) NOT NULL CHECK (quantity > 0),
        unit_price bigint NOT NULL CHECK (unit_price >= 0 AND unit_price <= 9007199254740991),
        discount_percent numeric(5, 2) NOT NULL DEFAULT 0 CHECK (discount_percent >= 0 AND discount_percent <= 100),
        currency char(3) NOT NULL,
        amount bigint NOT NULL CHECK (amount >= 0 AND amount <= 9007199254740991),
        created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now()),
        updated_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now())
      )`);
    await q.query(`CREATE INDEX line_items_deal ON line_items (deal_id, id)`);
    await q.query(`CREATE INDEX line_items_product ON line_items (product_id) WHERE product_id IS NOT NULL`);
    await q.query(`ALTER TABLE deals ADD COLUMN value_from_line_items boolean NOT NULL DEFAULT false`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`SET LOCAL lock_timeout = '5s'`);
    await q.query(`ALTER TABLE deals DROP COLUMN value_from_line_items`);
    await q.query(`DROP TABLE line_items`);
    await dropWordIndex(q, 'products');
    await q.query(`DROP TABLE products`);
  }
}
