import { AggregateDto, AggregateGroupView } from '../query/aggregate.dto';
import { RpcServiceName } from '../subjects';
import { aggregated, route } from './operation';

/**
 * `POST /<object>/aggregate` (docs/aggregate.md): a read, like the query, sent as POST for its filter tree;
 * answered by the service that keeps the object.
 */
const aggregateRoute = <Path extends string, Svc extends RpcServiceName>(service: Svc, name: `${Svc}.${string}`, path: Path, many: string) =>
  route({
    service,
    name,
    method: 'POST',
    path,
    status: 200,
    summary: `Aggregate ${many}: counts, sums, averages, extremes and percentiles over the query's filter, in up to three dimensions`,
    access: 'read',
    body: AggregateDto,
    reply: aggregated(AggregateGroupView),
    idempotent: true,
  });

export const aggregates = {
  contacts: aggregateRoute('contacts', 'contacts.contacts.aggregate', '/contacts/aggregate', 'contacts'),
  companies: aggregateRoute('contacts', 'contacts.companies.aggregate', '/companies/aggregate', 'companies'),
  users: aggregateRoute('contacts', 'contacts.users.aggregate', '/users/aggregate', 'team members'),
  activities: aggregateRoute('contacts', 'contacts.activities.aggregate', '/activities/aggregate', 'activities'),
  tasks: aggregateRoute('contacts', 'contacts.tasks.aggregate', '/tasks/aggregate', 'tasks'),
  deals: aggregateRoute('deals', 'deals.deals.aggregate', '/deals/aggregate', 'deals'),
  records: aggregateRoute('contacts', 'contacts.records.aggregate', '/objects/:slug/records/aggregate', 'records of a custom object'),
};
