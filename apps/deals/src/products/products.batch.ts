import { DomainError, FieldSpec, fieldSpecs, IdPrefix } from '@crm/common';
import { CreateProductDto, event, EventType, ProductView, UpdateProductDto } from '@crm/contracts';
import { BUILT_IN_RECORD_FIELDS, BuiltInCustomFieldsService, RecordBatchWriter, RecordTable } from '@crm/records';
import { Injectable } from '@nestjs/common';
import { ContactsDirectory } from '../deals/contacts-directory';
import { Product } from './product.entity';

export function presentProduct(product: Product): ProductView {
  return {
    id: product.id,
    name: product.name,
    sku: product.sku,
    description: product.description,
    price: product.price,
    currency: product.currency,
    active: product.active,
    metadata: product.metadata ?? {},
    custom_fields: product.customFields ?? {},
    created_at: product.createdAt.toISOString(),
    updated_at: product.updatedAt.toISOString(),
  };
}

/** What a PATCH may change, in the order product.updated reports it. */
const PRODUCT_FIELDS: FieldSpec<Product>[] = [
  ...fieldSpecs<Product>({ name: 'value', sku: 'value', description: 'value', price: 'value', currency: 'value', active: 'value' }),
  ...BUILT_IN_RECORD_FIELDS,
];

/** The 409 of a write whose SKU another product (`holder`, when known) already has, whatever its case. */
function skuTaken(sku: string, holder: string | undefined): DomainError {
  const owner = holder ? ` (${holder})` : '';
  return DomainError.conflict(`A product with sku '${sku}' already exists${owner}.`, [
    { field: 'sku', code: 'duplicate', message: `sku '${sku}' is already used by another product${owner}` },
  ]);
}

/**
 * Products as the record engine writes them: nothing differs from any record but the defaults of a new
 * one. Deleting a product leaves the line items that sold it as they are (their own name and prices).
 */
export const productsTable: RecordTable<Product, CreateProductDto, UpdateProductDto, ProductView, ProductView> = {
  entity: Product,
  table: 'products',
  noun: 'product',
  prefix: IdPrefix.Product,
  object: 'products',
  createBody: CreateProductDto,
  updateBody: UpdateProductDto,
  fields: PRODUCT_FIELDS,
  references: [],
  unique: { field: 'sku', prop: 'sku', expression: 'lower(sku)', taken: skuTaken },
  newRow: (dto) => ({
    name: dto.name,
    sku: dto.sku ?? null,
    description: dto.description ?? null,
    price: dto.price ?? 0,
    currency: dto.currency ?? 'USD',
    active: dto.active ?? true,
  }),
  created: (row) => event(EventType.ProductCreated, { product_id: row.id, name: row.name, sku: row.sku, price: row.price, currency: row.currency }),
  updated: (row, changes) => event(EventType.ProductUpdated, { product_id: row.id, ...changes }),
  deleted: (row) => event(EventType.ProductDeleted, { product_id: row.id }),
  changeView: presentProduct,
  presentCreated: async (_m, rows) => rows.map(presentProduct),
  presentUpdated: async (_m, rows) => rows.map(presentProduct),
};

@Injectable()
export class ProductsBatchWriter extends RecordBatchWriter<Product, CreateProductDto, UpdateProductDto, ProductView, ProductView> {
  constructor(customFields: BuiltInCustomFieldsService, directory: ContactsDirectory) {
    super(productsTable, customFields, directory);
  }
}
