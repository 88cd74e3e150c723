import 'reflect-metadata';
import { compileEventFilter, eventFilterIssues } from './event-filter';
import { eventPathResolver } from './event-filter-paths';

const won = {
  type: 'deal.updated',
  actor: { type: 'api_key', id: 'key_1' },
  via: 'api',
  request_id: 'r1',
  data: { deal_id: 'deal_1', changed: ['status', 'stage_id'], previous: { status: 'open', value: 5 }, current: { status: 'won', value: 10 } },
};

describe('event filters', () => {
  it('matches transitions, membership, the actor and nulls as MongoDB does', () => {
    const holds = (f: Record<string, unknown>) => compileEventFilter(f)(won);
    expect(holds({ 'data.previous.status': 'open', 'data.current.status': 'won' })).toBe(true);
    expect(holds({ 'data.changed': 'stage_id' })).toBe(true);
    expect(holds({ 'data.changed': { $in: ['owner_id', 'status'] } })).toBe(true);
    expect(holds({ 'data.changed': { $nin: ['owner_id', 'status'] } })).toBe(false);
    expect(holds({ 'data.changed': 'owner_id' })).toBe(false);
    expect(holds({ 'actor.type': 'api_key', via: { $ne: 'import' } })).toBe(true);
    expect(holds({ 'data.current.owner_id': null })).toBe(true);
    expect(holds({ 'data.current.owner_id': { $ne: null } })).toBe(false);
    expect(holds({ 'data.current.value': { $gt: 5 } })).toBe(true);
    expect(holds({ 'data.current.missing': { $gt: 5 } })).toBe(false);
    expect(holds({ $not: { 'data.current.value': { $gt: 5 } } })).toBe(false);
    expect(holds({ $or: [{ type: 'deal.created' }, { 'data.current.status': { $starts_with: 'W' } }] })).toBe(true);
  });

  it('checks paths against the catalog of the chosen types, operators against types, and the depth', () => {
    const resolve = eventPathResolver(['deal.updated']);
    expect(eventFilterIssues({ 'data.current.status': 'won', 'data.changed': 'stage_id', 'data.current.custom_fields.tier': 'a' }, resolve)).toEqual([]);
    const issues = eventFilterIssues(
      { 'data.nope': 1, 'data.current.email': 'x', 'data.current.value': { $contains: 'x' }, 'data.current.status': 'wat' },
      resolve,
    );
    expect(issues.map((i) => [i.field, i.code])).toEqual([
      ['filter.data.nope', 'unknown_field'],
      ['filter.data.current.email', 'unknown_field'],
      ['filter.data.current.value.$contains', 'invalid_operator'],
      ['filter.data.current.status', 'invalid_value'],
    ]);
    expect(eventFilterIssues({ 'data.current.email': 'x' }, eventPathResolver(['contact.updated']))).toEqual([]);
    let deep: Record<string, unknown> = { type: 'deal.updated' };
    for (let i = 0; i < 9; i++) deep = { $not: deep };
    expect(eventFilterIssues(deep, resolve).map((i) => i.code)).toEqual(['too_deep']);
  });
});
