import { AggregateLimits, AnyOperation, Ops, slugsWith } from '@crm/contracts';
import type { McpTool } from './mcp-tools';
import { objectInput, objectOf, read } from './record-tools';

/** Each object's `POST /<object>/aggregate`; a custom object's records take its slug. */
const AGGREGATE_ROUTES: Readonly<Record<string, AnyOperation>> = Object.fromEntries(slugsWith('queryable').map((slug) => [slug, Ops.aggregates[slug]]));

/** What is aggregated but not an object of its own: every deal's line items (revenue by product). */
const LINE_ITEMS = 'line_items';

/** aggregate_records (docs/aggregate.md): the object's aggregation route, with a short schema; the service checks the shapes and names every problem. */
export const AGGREGATE_TOOLS: readonly McpTool[] = [
  {
    name: 'aggregate_records',
    title: 'Aggregate records',
    description:
      'How many, how much, where: metrics over the records a query filter matches, in up to 3 groups. group_by items: a path, {field,interval:hour|day|week|month|quarter|year,time_zone?} or {field,ranges:[bounds]}. metrics: {name:{op:count|count_distinct|sum|avg|min|max|percentile,field?,percentile?}}. sort: [{metric|group,direction?}].',
    ...read,
    input: objectInput(
      {
        object: { type: 'string', description: `An object slug from describe_schema, or ${LINE_ITEMS} (with deal.* and product.* paths).` },
        filter: { type: 'object', description: 'As in query_records.' },
        group_by: { type: 'array', maxItems: AggregateLimits.dimensions },
        metrics: { type: 'object', minProperties: 1, maxProperties: AggregateLimits.metrics },
        sort: { type: 'array', maxItems: AggregateLimits.sortKeys },
        limit: { type: 'integer', minimum: 1, maximum: AggregateLimits.groups },
        cursor: { type: 'string' },
      },
      ['object', 'metrics'],
    ),
    run: async (args, context) => {
      const { object: _object, ...body } = args;
      if (args.object === LINE_ITEMS) return context.call(Ops.lineItems.aggregate, { body });
      const { slug, params } = await objectOf(args, context);
      // A custom object may be called `constructor`: only the map's own entries are built-in routes.
      const op = Object.hasOwn(AGGREGATE_ROUTES, slug) ? AGGREGATE_ROUTES[slug] : Ops.aggregates.records;
      return context.call(op, { params, body });
    },
  },
];
