import { randomBytes } from 'crypto';
import { eventsBefore, LoggedEvent } from '../support/event-log';
import { startStack, TestStack } from '../support/stack';

const tag = () => randomBytes(4).toString('hex');

/**
 * Deleting a contact removes its company associations at once, each with its `contact.company_removed`
 * (docs/associations.md, Merges and deletions; Events), whether it is deleted alone or in a batch.
 */
describe("A contact's deletion and its company associations", () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ services: ['contacts', 'events'] });
  });
  afterAll(() => stack.stop());

  async function created(path: string, body: Record<string, unknown>): Promise<string> {
    const res = await stack.api.post(path, body);
    if (res.status !== 201) throw new Error(`POST ${path} answered ${res.status}: ${res.text}`);
    return res.body.data.id;
  }

  /** A contact whose primary company is `employer`, also on `board`'s board. */
  async function associatedContact(employer: string, board: string): Promise<string> {
    const contact = await created('/contacts', { email: `leaving-${tag()}@delete.example`, company_id: employer });
    expect((await stack.api.post(`/contacts/${contact}/companies`, { company_id: board, role: 'board' })).status).toBe(201);
    return contact;
  }

  const members = async (company: string) => (await stack.api.listAll<{ contact_id: string }>(`/companies/${company}/contacts`)).map((m) => m.contact_id);

  /** The events of one request, up to a contact created after it (the same service's events reach the log in commit order). */
  async function eventsOf(requestId: string): Promise<Array<Pick<LoggedEvent, 'type' | 'data'>>> {
    const marker = await created('/contacts', { email: `marker-${tag()}@delete.example` });
    const events = await eventsBefore(stack.api, (e) => e.type === 'contact.created' && e.data.contact_id === marker);
    return events.filter((e) => e.request_id === requestId).map((e) => ({ type: e.type, data: e.data }));
  }

  const removed = (contact: string, company: string, role: string | null, primary: boolean) => ({
    type: 'contact.company_removed',
    data: { contact_id: contact, company_id: company, role, is_primary: primary },
  });

  it('removes them with DELETE /contacts/:id', async () => {
    const employer = await created('/companies', { name: 'Employer', domain: `employer-${tag()}.example` });
    const board = await created('/companies', { name: 'Board', domain: `board-${tag()}.example` });
    const contact = await associatedContact(employer, board);
    const stays = await associatedContact(employer, board);

    const requestId = `delete-${tag()}`;
    expect((await stack.api.delete(`/contacts/${contact}`, { headers: { 'X-Request-Id': requestId } })).status).toBe(204);
    expect(await members(employer)).toEqual([stays]);
    expect(await members(board)).toEqual([stays]);

    const events = await eventsOf(requestId);
    expect(events).toEqual(
      expect.arrayContaining([
        removed(contact, employer, null, true),
        removed(contact, board, 'board', false),
        { type: 'contact.deleted', data: { contact_id: contact } },
      ]),
    );
    expect(events).toHaveLength(3);
  }, 300_000);

  it('removes them with a batch delete', async () => {
    const employer = await created('/companies', { name: 'Employer', domain: `employer-${tag()}.example` });
    const board = await created('/companies', { name: 'Board', domain: `board-${tag()}.example` });
    const first = await associatedContact(employer, board);
    const second = await associatedContact(employer, board);

    const requestId = `batch-delete-${tag()}`;
    const res = await stack.api.post(
      '/contacts/batch',
      { operation: 'delete', items: [{ id: first }, { id: second }] },
      { headers: { 'X-Request-Id': requestId } },
    );
    expect(res.status).toBe(200);
    expect(res.body.data.map((r: { status: number }) => r.status)).toEqual([204, 204]);
    expect(await members(employer)).toEqual([]);
    expect(await members(board)).toEqual([]);

    const events = await eventsOf(requestId);
    expect(events).toEqual(
      expect.arrayContaining([
        removed(first, employer, null, true),
        removed(first, board, 'board', false),
        removed(second, employer, null, true),
        removed(second, board, 'board', false),
        { type: 'contact.deleted', data: { contact_id: first } },
        { type: 'contact.deleted', data: { contact_id: second } },
      ]),
    );
    expect(events).toHaveLength(6);
  }, 300_000);
});
