import 'reflect-metadata';
import { OBJECT_SERVICES, ObjectService, Ops, slugsWith } from '@crm/contracts';
import { PATTERN_METADATA } from '@nestjs/microservices/constants';
import { recordChangesController } from './record-changes.controller';
import { RecordCatalogs, recordQueriesController } from './record-queries.controller';

/** The request names a controller class answers. */
function patterns(controller: Function): string[] {
  const proto = controller.prototype as Record<string, unknown>;
  return Object.getOwnPropertyNames(proto).flatMap((key) => {
    const method = proto[key];
    const names = typeof method === 'function' ? (Reflect.getMetadata(PATTERN_METADATA, method) as string[] | undefined) : undefined;
    return names ?? [];
  });
}

abstract class AnyCatalogs extends RecordCatalogs<ObjectService> {}

/** The engine's handlers follow the registry: every object a service keeps with the capability gets its operation there, and only there. */
describe.each(OBJECT_SERVICES)('the record engine in the %s service', (service) => {
  it("answers the query and aggregation of every queryable object it keeps, and the service's internal query operations", () => {
    const answered = patterns(recordQueriesController(service, AnyCatalogs as never));
    const objects = slugsWith('queryable', service);
    expect(objects.length).toBeGreaterThan(0);
    for (const slug of objects) expect(answered).toEqual(expect.arrayContaining([Ops[slug].query.name, Ops.aggregates[slug].name]));
    const internal = service === 'contacts' ? Ops.contactsInternal : Ops.dealsInternal;
    expect(answered).toEqual(expect.arrayContaining([internal.queryMatch.name, internal.queryValues.name, internal.queryFields.name]));
    expect(answered.every((name) => name.startsWith(`${service}.`))).toBe(true);
  });

  it('answers the record history of every object with a history it keeps', () => {
    const answered = patterns(recordChangesController(service));
    expect(answered.sort()).toEqual(
      slugsWith('history', service)
        .map((slug) => Ops[slug].changes.name)
        .sort(),
    );
  });
});
