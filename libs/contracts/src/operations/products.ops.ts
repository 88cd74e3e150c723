import { PageQuery, SortablePageQuery } from '../paging';
import { CreateLineItemDto, CreateProductDto, LineItemView, ProductView, UpdateLineItemDto, UpdateProductDto } from '../products';
import { AggregateDto, AggregateGroupView } from '../query/aggregate.dto';
import { aggregated, noContent, page, readingPost, resource, route } from './operation';
import { batchRoute, queryRoute, recordRoutes } from './shared';

/** Products (docs/products.md), kept by the deals service. */
export const products = recordRoutes(
  'deals',
  'products',
  ['a product', 'products'],
  ProductView,
  { create: CreateProductDto, update: UpdateProductDto, list: SortablePageQuery },
  'Create a product',
);

const notFound = { 404: 'No such deal, or no such line item on it (`not_found`).' };
const refused = {
  400: "A field is invalid, its currency is not the deal's (`currency_mismatch`), or its product does not exist (`not_found`, details name product_id).",
};

/** A deal's line items (docs/products.md): the deal's value follows them when its value_from_line_items is true. */
export const lineItems = {
  add: route({
    service: 'deals',
    name: 'deals.line_items.add',
    method: 'POST',
    path: '/deals/:id/line_items',
    summary: "Add a line item to a deal; its unit_price defaults to the product's price",
    access: 'write',
    body: CreateLineItemDto,
    reply: resource(LineItemView),
    errors: { ...refused, 404: 'No such deal (`not_found`).' },
  }),
  list: route({
    service: 'deals',
    name: 'deals.line_items.list',
    method: 'GET',
    path: '/deals/:id/line_items',
    summary: "List a deal's line items, oldest first",
    access: 'read',
    // Products appear by id only; the line keeps its own name and prices.
    reads: [],
    query: PageQuery,
    reply: page(LineItemView),
  }),
  update: route({
    service: 'deals',
    name: 'deals.line_items.update',
    method: 'PATCH',
    path: '/deals/:id/line_items/:line_item_id',
    summary: 'Change a line item',
    access: 'write',
    body: UpdateLineItemDto,
    reply: resource(LineItemView),
    errors: { ...refused, ...notFound },
  }),
  remove: route({
    service: 'deals',
    name: 'deals.line_items.remove',
    method: 'DELETE',
    path: '/deals/:id/line_items/:line_item_id',
    summary: 'Remove a line item from a deal',
    access: 'write',
    reply: noContent,
    errors: notFound,
  }),
  batch: {
    ...batchRoute('deals', 'deals.line_items.batch', '/deals/:id/line_items/batch', 'line items of a deal', LineItemView),
    mcp: {
      tool: 'write_line_items',
      title: "Write a deal's line items",
      description:
        "Create, update ({id, ...fields}) or delete ({id}) up to 200 line items of one deal (id) in one write; the deal's value follows when value_from_line_items. Items as POST /deals/:id/line_items bodies: product_id?, name?, quantity, unit_price? (cents), discount_percent?, currency?.",
    },
  },
  /** Every deal's lines, with `deal.*` and `product.*` one hop away (docs/products.md). */
  query: queryRoute('deals', 'deals.line_items.query', '/deals/line_items/query', LineItemView, 'the line items of every deal'),
  aggregate: readingPost({
    service: 'deals',
    name: 'deals.line_items.aggregate',
    path: '/deals/line_items/aggregate',
    summary: 'Aggregate the line items of every deal (revenue by product): as POST /deals/aggregate, over lines, their deal and their product',
    body: AggregateDto,
    reply: aggregated(AggregateGroupView),
  }),
};
