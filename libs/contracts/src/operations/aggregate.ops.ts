import { AggregateDto, AggregateGroupView } from '../query/aggregate.dto';
import { RpcServiceName } from '../subjects';
import { aggregated, readingPost } from './operation';

/**
 * `POST /<object>/aggregate` (docs/aggregate.md): a read, like the query, sent as POST for its filter tree;
 * answered by the service that keeps the object.
 */
const aggregateRoute = <Path extends string, Svc extends RpcServiceName>(service: Svc, name: `${Svc}.${string}`, path: Path, many: string) =>
  readingPost({
    service,
    name,
    path,
    summary: `Aggregate ${many}: counts, sums, averages, extremes and percentiles over the query's filter, in up to three dimensions`,
    body: AggregateDto,
    reply: aggregated(AggregateGroupView),
  });

export const aggregates = {
  contacts: aggregateRoute('contacts', 'contacts.contacts.aggregate', '/contacts/aggregate', 'contacts'),
  companies: aggregateRoute('contacts', 'contacts.companies.aggregate', '/companies/aggregate', 'companies'),
  users: aggregateRoute('contacts', 'contacts.users.aggregate', '/users/aggregate', 'team members'),
  activities: aggregateRoute('contacts', 'contacts.activities.aggregate', '/activities/aggregate', 'activities'),
  tasks: aggregateRoute('contacts', 'contacts.tasks.aggregate', '/tasks/aggregate', 'tasks'),
  deals: aggregateRoute('deals', 'deals.deals.aggregate', '/deals/aggregate', 'deals'),
  products: aggregateRoute('deals', 'deals.products.aggregate', '/products/aggregate', 'products'),
  records: aggregateRoute('contacts', 'contacts.records.aggregate', '/objects/:slug/records/aggregate', 'records of a custom object'),
};
