import { randomBytes } from 'crypto';
import { eventsBefore, LoggedEvent } from '../support/event-log';
import { startStack, TestStack } from '../support/stack';

const tag = () => randomBytes(4).toString('hex');

/**
 * A primary moved with `is_primary` is also the record's own update: `deal.updated` / `contact.updated`
 * naming `contact_id` / `company_id` in `changed`, beside the association events of every association it
 * touched (docs/associations.md). Each step is sent with its own X-Request-Id, and a marker written after
 * the last one bounds the events read, so an event missing from the answer was never emitted.
 */
describe('Events of a primary association moved with is_primary', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ services: ['contacts', 'deals', 'events'] });
  });
  afterAll(() => stack.stop());

  const requestId = (step: string) => `${step}-${tag()}`;
  const as = (id: string) => ({ headers: { 'X-Request-Id': id } });
  /** The events of one request, in log order. */
  const ofRequest = (events: LoggedEvent[], id: string) => events.filter((e) => e.request_id === id).map((e) => ({ type: e.type, data: e.data }));

  async function created(path: string, body: Record<string, unknown>): Promise<string> {
    const res = await stack.api.post(path, body);
    if (res.status !== 201) throw new Error(`POST ${path} answered ${res.status}: ${res.text}`);
    return res.body.data.id;
  }

  it('on a deal: deal.updated names contact_id, with deal.contact_added and deal.contact_updated', async () => {
    const pipeline = (await stack.api.post('/pipelines', { name: `Primary ${tag()}`, stages: [{ name: 'Open', type: 'open' }] })).body.data;
    const first = await created('/contacts', { email: `first-${tag()}@primary.example` });
    const second = await created('/contacts', { email: `second-${tag()}@primary.example` });
    const deal = await created('/deals', { name: `Deal ${tag()}`, pipeline_id: pipeline.id, stage_id: pipeline.stages[0].id, contact_id: first });

    const add = requestId('add');
    expect((await stack.api.post(`/deals/${deal}/contacts`, { contact_id: second, role: 'champion', is_primary: true }, as(add))).status).toBe(201);
    const promote = requestId('promote');
    expect((await stack.api.patch(`/deals/${deal}/contacts/${first}`, { is_primary: true }, as(promote))).status).toBe(200);
    const demote = requestId('demote');
    expect((await stack.api.patch(`/deals/${deal}/contacts/${first}`, { is_primary: false }, as(demote))).status).toBe(200);

    const marker = `Marker ${tag()}`;
    expect((await stack.api.patch(`/deals/${deal}`, { name: marker })).status).toBe(200);
    const events = await eventsBefore(stack.api, (e) => e.type === 'deal.updated' && e.data.deal_id === deal && e.data.current?.name === marker);

    const moved = (from: string | null, to: string | null) => ({
      type: 'deal.updated',
      // With the deal's version, for copies kept from an export (docs/exports.md); this path reports only what it changes.
      data: { deal_id: deal, changed: ['contact_id'], previous: { contact_id: from }, current: { contact_id: to }, version: expect.any(Number) },
    });
    const association = (contact: string, role: string | null, primary: boolean, type = 'deal.contact_updated') => ({
      type,
      data: {
        deal_id: deal,
        contact_id: contact,
        role,
        is_primary: primary,
        ...(type === 'deal.contact_updated' ? { changed: ['is_primary'], previous: { is_primary: !primary }, current: { is_primary: primary } } : {}),
      },
    });
    expect(ofRequest(events, add)).toEqual(
      expect.arrayContaining([association(first, null, false), association(second, 'champion', true, 'deal.contact_added'), moved(first, second)]),
    );
    expect(ofRequest(events, add)).toHaveLength(3);
    expect(ofRequest(events, promote)).toEqual(
      expect.arrayContaining([association(second, 'champion', false), association(first, null, true), moved(second, first)]),
    );
    expect(ofRequest(events, promote)).toHaveLength(3);
    expect(ofRequest(events, demote)).toEqual(expect.arrayContaining([association(first, null, false), moved(first, null)]));
    expect(ofRequest(events, demote)).toHaveLength(2);
  }, 300_000);

  it('on a contact: contact.updated names company_id, with contact.company_added and contact.company_updated', async () => {
    const employer = await created('/companies', { name: 'Employer', domain: `employer-${tag()}.example` });
    const advised = await created('/companies', { name: 'Advised', domain: `advised-${tag()}.example` });
    const contact = await created('/contacts', { email: `person-${tag()}@primary.example`, company_id: employer });

    const add = requestId('add');
    expect((await stack.api.post(`/contacts/${contact}/companies`, { company_id: advised, role: 'advisor', is_primary: true }, as(add))).status).toBe(201);
    const promote = requestId('promote');
    expect((await stack.api.patch(`/contacts/${contact}/companies/${employer}`, { is_primary: true }, as(promote))).status).toBe(200);
    const demote = requestId('demote');
    expect((await stack.api.patch(`/contacts/${contact}/companies/${employer}`, { is_primary: false }, as(demote))).status).toBe(200);

    const marker = `Marker ${tag()}`;
    expect((await stack.api.patch(`/contacts/${contact}`, { title: marker })).status).toBe(200);
    const events = await eventsBefore(stack.api, (e) => e.type === 'contact.updated' && e.data.contact_id === contact && e.data.current?.title === marker);

    const moved = (from: string | null, to: string | null) => ({
      type: 'contact.updated',
      data: { contact_id: contact, changed: ['company_id'], previous: { company_id: from }, current: { company_id: to }, version: expect.any(Number) },
    });
    const association = (company: string, role: string | null, primary: boolean, type = 'contact.company_updated') => ({
      type,
      data: {
        contact_id: contact,
        company_id: company,
        role,
        is_primary: primary,
        ...(type === 'contact.company_updated' ? { changed: ['is_primary'], previous: { is_primary: !primary }, current: { is_primary: primary } } : {}),
      },
    });
    expect(ofRequest(events, add)).toEqual(
      expect.arrayContaining([association(employer, null, false), association(advised, 'advisor', true, 'contact.company_added'), moved(employer, advised)]),
    );
    expect(ofRequest(events, add)).toHaveLength(3);
    expect(ofRequest(events, promote)).toEqual(
      expect.arrayContaining([association(advised, 'advisor', false), association(employer, null, true), moved(advised, employer)]),
    );
    expect(ofRequest(events, promote)).toHaveLength(3);
    expect(ofRequest(events, demote)).toEqual(expect.arrayContaining([association(employer, null, false), moved(employer, null)]));
    expect(ofRequest(events, demote)).toHaveLength(2);
  }, 300_000);
});
