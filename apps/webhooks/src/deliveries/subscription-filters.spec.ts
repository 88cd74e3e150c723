import { DataSource } from 'typeorm';
import { SubscriptionFilters } from './subscription-filters';

interface Row {
  id: string;
  filter: string | null;
  event_types: string[] | null;
  cursor_revision: number;
}

/** A data source that never connects: answers the definitions' read from `table`, counting the ids asked for. */
class TableDataSource extends DataSource {
  readonly asked: string[][] = [];

  constructor(private readonly table: Map<string, Row>) {
    super({ type: 'postgres' });
  }

  override async query<T>(_sql: string, parameters?: unknown[]): Promise<T> {
    const ids = parameters![0] as string[];
    this.asked.push(ids);
    return ids.flatMap((id) => (this.table.has(id) ? [{ ...this.table.get(id)! }] : [])) as T;
  }
}

function fakeTable(table: Map<string, Row>) {
  const dataSource = new TableDataSource(table);
  return { dataSource, asked: dataSource.asked };
}

describe('SubscriptionFilters', () => {
  const won = JSON.stringify({ 'data.stage': 'won' });
  const lost = JSON.stringify({ 'data.stage': 'lost' });

  it('reads a definition once per revision and answers later asks from memory', async () => {
    const table = new Map([['wh_a', { id: 'wh_a', filter: won, event_types: ['deal.updated'], cursor_revision: 1 }]]);
    const { dataSource, asked } = fakeTable(table);
    const filters = new SubscriptionFilters(dataSource);
    const first = (await filters.at([{ id: 'wh_a', revision: 1 }])).get('wh_a')!;
    const again = (await filters.at([{ id: 'wh_a', revision: 1 }])).get('wh_a')!;
    expect(asked).toEqual([['wh_a']]);
    expect(again).toBe(first);
    expect(first.holds!({ data: { stage: 'won' } })).toBe(true);
    expect(first.eventTypes).toEqual(['deal.updated']);
  });

  it('reads again when the revision moved on (a filter changed, on this replica or another), and never answers an older filter for it', async () => {
    const table = new Map([['wh_a', { id: 'wh_a', filter: won, event_types: null, cursor_revision: 1 }]]);
    const { dataSource, asked } = fakeTable(table);
    const filters = new SubscriptionFilters(dataSource);
    await filters.at([{ id: 'wh_a', revision: 1 }]);
    table.set('wh_a', { id: 'wh_a', filter: lost, event_types: null, cursor_revision: 2 });
    const changed = (await filters.at([{ id: 'wh_a', revision: 2 }])).get('wh_a')!;
    expect(asked).toEqual([['wh_a'], ['wh_a']]);
    expect(changed.holds!({ data: { stage: 'lost' } })).toBe(true);
    expect(changed.holds!({ data: { stage: 'won' } })).toBe(false);
  });

  it('leaves out a subscription whose revision moved on or that was deleted after the caller read it', async () => {
    const table = new Map([['wh_a', { id: 'wh_a', filter: null, event_types: null, cursor_revision: 3 }]]);
    const { dataSource } = fakeTable(table);
    const filters = new SubscriptionFilters(dataSource);
    const found = await filters.at([
      { id: 'wh_a', revision: 2 },
      { id: 'wh_gone', revision: 0 },
    ]);
    expect(found.size).toBe(0);
  });

  it('shares one compiled predicate among subscriptions with the same filter', async () => {
    const table = new Map([
      ['wh_a', { id: 'wh_a', filter: won, event_types: null, cursor_revision: 0 }],
      ['wh_b', { id: 'wh_b', filter: won, event_types: null, cursor_revision: 0 }],
    ]);
    const filters = new SubscriptionFilters(fakeTable(table).dataSource);
    const found = await filters.at([
      { id: 'wh_a', revision: 0 },
      { id: 'wh_b', revision: 0 },
    ]);
    expect(found.get('wh_a')!.holds).toBe(found.get('wh_b')!.holds);
  });
});
