import { randomBytes } from 'crypto';
import { eventually } from '../support/api-client';
import { startStack, TestStack } from '../support/stack';

const tag = () => randomBytes(4).toString('hex');

interface Event {
  id: string;
  type: string;
  via: string;
  data: Record<string, any>;
}

/** Associations (docs/associations.md): many contacts per deal and many companies per contact, with roles and one primary. */
describe('associations', () => {
  let stack: TestStack;
  let pipelineId: string;
  let stageId: string;

  beforeAll(async () => {
    stack = await startStack();
    const pipeline = (
      await stack.api.post('/pipelines', {
        name: `Assoc ${tag()}`,
        stages: [
          { name: 'Open', type: 'open' },
          { name: 'Won', type: 'won' },
        ],
      })
    ).body.data;
    pipelineId = pipeline.id;
    stageId = pipeline.stages[0].id;
  });
  afterAll(() => stack?.stop());

  const contact = async (first = 'Pat'): Promise<string> => {
    const res = await stack.api.post('/contacts', { email: `${first.toLowerCase()}-${tag()}@assoc.example`, first_name: first, last_name: 'Lee' });
    expect(res.status).toBe(201);
    return res.body.data.id;
  };
  const company = async (name = 'Acme'): Promise<string> => {
    const res = await stack.api.post('/companies', { name: `${name} ${tag()}`, domain: `${name.toLowerCase()}-${tag()}.example` });
    expect(res.status).toBe(201);
    return res.body.data.id;
  };
  const deal = async (extra: Record<string, unknown> = {}): Promise<string> => {
    const res = await stack.api.post('/deals', { name: `Deal ${tag()}`, pipeline_id: pipelineId, stage_id: stageId, value: 1000, ...extra });
    expect(res.status).toBe(201);
    return res.body.data.id;
  };
  const dealContacts = (dealId: string) => stack.api.listAll<Record<string, any>>(`/deals/${dealId}/contacts`);
  const contactCompanies = (contactId: string) => stack.api.listAll<Record<string, any>>(`/contacts/${contactId}/companies`);
  const eventsAbout = async (types: string, match: (data: Record<string, any>) => boolean): Promise<Event[]> =>
    (await stack.api.listAll<Event>(`/events?type=${types}`)).filter((e) => match(e.data));

  describe('deal contacts', () => {
    it('adds contacts with roles, answers the exact shape, lists them with a contact summary, and refuses a second association', async () => {
      const dealId = await deal();
      const champion = await contact('Chris');
      const user = await contact('Uma');

      const added = await stack.api.post(`/deals/${dealId}/contacts`, { contact_id: champion, role: 'champion' });
      expect(added.status).toBe(201);
      expect(Object.keys(added.body.data).sort()).toEqual(['contact_id', 'created_at', 'deal_id', 'is_primary', 'role']);
      expect(added.body.data).toMatchObject({ deal_id: dealId, contact_id: champion, role: 'champion', is_primary: false });
      expect(Date.parse(added.body.data.created_at)).not.toBeNaN();
      expect((await stack.api.post(`/deals/${dealId}/contacts`, { contact_id: user })).status).toBe(201);

      const again = await stack.api.post(`/deals/${dealId}/contacts`, { contact_id: champion, role: 'user' });
      expect(again.status).toBe(409);
      expect(again.body.error.code).toBe('conflict');

      const listed = await dealContacts(dealId);
      expect(listed).toHaveLength(2);
      const byId = new Map(listed.map((item) => [item.contact_id, item]));
      expect(byId.get(champion)).toMatchObject({
        deal_id: dealId,
        role: 'champion',
        is_primary: false,
        contact: { type: 'contact', id: champion, name: 'Chris Lee' },
      });
      expect(byId.get(user)).toMatchObject({ role: null, is_primary: false, contact: { type: 'contact', id: user, name: 'Uma Lee' } });

      // The deal itself still has no primary contact.
      expect((await stack.api.get(`/deals/${dealId}`)).body.data.contact_id).toBeNull();
    });

    it('answers 404 for an unknown contact or deal, 400 for a malformed id, a long role or an unknown field', async () => {
      const dealId = await deal();
      const unknownContact = await stack.api.post(`/deals/${dealId}/contacts`, { contact_id: 'cont_01aaaaaaaaaaaaaaaaaaaaaaaa' });
      expect(unknownContact.status).toBe(404);
      expect(unknownContact.body.error.code).toBe('not_found');
      expect(unknownContact.body.error.details).toEqual([expect.objectContaining({ field: 'contact_id', code: 'not_found' })]);

      const someone = await contact();
      expect((await stack.api.post(`/deals/deal_01aaaaaaaaaaaaaaaaaaaaaaaa/contacts`, { contact_id: someone })).status).toBe(404);
      expect((await stack.api.get(`/deals/deal_01aaaaaaaaaaaaaaaaaaaaaaaa/contacts`)).status).toBe(404);

      const malformed = await stack.api.post(`/deals/${dealId}/contacts`, { contact_id: 'nope' });
      expect(malformed.status).toBe(400);
      expect(malformed.body.error.details).toEqual([expect.objectContaining({ field: 'contact_id' })]);
      const long = await stack.api.post(`/deals/${dealId}/contacts`, { contact_id: someone, role: 'x'.repeat(65) });
      expect(long.status).toBe(400);
      expect(long.body.error.details).toEqual([expect.objectContaining({ field: 'role' })]);
      expect((await stack.api.post(`/deals/${dealId}/contacts`, { contact_id: someone, role: 'x'.repeat(64) })).status).toBe(201);
      const wrongType = await stack.api.patch(`/deals/${dealId}/contacts/${someone}`, { is_primary: 'yes' });
      expect(wrongType.status).toBe(400);
      expect((await stack.api.patch(`/deals/${dealId}/contacts/${someone}`, { colour: 'red' })).status).toBe(400);

      const stranger = await contact();
      expect((await stack.api.patch(`/deals/${dealId}/contacts/${stranger}`, { role: 'user' })).status).toBe(404);
      expect((await stack.api.delete(`/deals/${dealId}/contacts/${stranger}`)).status).toBe(404);
      expect((await stack.api.get(`/deals/${dealId}/contacts?cursor=bogus`)).status).toBe(400);
    });

    it('keeps contact_id naming the primary: setting it creates the association, is_primary moves it, one primary at most', async () => {
      const first = await contact('First');
      const second = await contact('Second');
      const dealId = await deal({ contact_id: first });

      expect(await dealContacts(dealId)).toEqual([expect.objectContaining({ contact_id: first, is_primary: true, role: null })]);

      // Adding another as primary demotes the first and moves contact_id.
      const promoted = await stack.api.post(`/deals/${dealId}/contacts`, { contact_id: second, role: 'decision_maker', is_primary: true });
      expect(promoted.status).toBe(201);
      expect(promoted.body.data.is_primary).toBe(true);
      expect((await stack.api.get(`/deals/${dealId}`)).body.data.contact_id).toBe(second);
      let listed = await dealContacts(dealId);
      expect(listed.filter((a) => a.is_primary).map((a) => a.contact_id)).toEqual([second]);
      expect(listed.find((a) => a.contact_id === first)!.is_primary).toBe(false);

      // PATCH is_primary on the first moves it back.
      const patched = await stack.api.patch(`/deals/${dealId}/contacts/${first}`, { is_primary: true, role: 'champion' });
      expect(patched.status).toBe(200);
      expect(patched.body.data).toMatchObject({ deal_id: dealId, contact_id: first, is_primary: true, role: 'champion' });
      expect((await stack.api.get(`/deals/${dealId}`)).body.data.contact_id).toBe(first);
      listed = await dealContacts(dealId);
      expect(listed.filter((a) => a.is_primary).map((a) => a.contact_id)).toEqual([first]);

      // PATCH /deals with a new contact_id replaces the primary association: the old one goes, the new one is primary.
      const third = await contact('Third');
      expect((await stack.api.patch(`/deals/${dealId}`, { contact_id: third })).status).toBe(200);
      listed = await dealContacts(dealId);
      expect(listed.map((a) => [a.contact_id, a.is_primary]).sort()).toEqual(
        [
          [second, false],
          [third, true],
        ].sort(),
      );

      // contact_id set to a contact already associated keeps its role and makes it primary.
      expect((await stack.api.patch(`/deals/${dealId}`, { contact_id: second })).status).toBe(200);
      listed = await dealContacts(dealId);
      expect(listed.map((a) => [a.contact_id, a.is_primary, a.role]).sort()).toEqual([[second, true, 'decision_maker']]);

      // is_primary false leaves the deal without a primary; deleting the primary does too.
      expect((await stack.api.patch(`/deals/${dealId}/contacts/${second}`, { is_primary: false })).body.data.is_primary).toBe(false);
      expect((await stack.api.get(`/deals/${dealId}`)).body.data.contact_id).toBeNull();
      expect((await stack.api.patch(`/deals/${dealId}/contacts/${second}`, { is_primary: true })).status).toBe(200);
      expect((await stack.api.delete(`/deals/${dealId}/contacts/${second}`)).status).toBe(204);
      expect((await stack.api.get(`/deals/${dealId}`)).body.data.contact_id).toBeNull();
      expect(await dealContacts(dealId)).toEqual([]);

      // Clearing contact_id removes the primary association.
      expect((await stack.api.patch(`/deals/${dealId}`, { contact_id: first })).status).toBe(200);
      expect((await stack.api.patch(`/deals/${dealId}`, { contact_id: null })).status).toBe(200);
      expect(await dealContacts(dealId)).toEqual([]);
    });

    it('lists every deal of a contact, primary or not, with its role; batch writes follow contact_id too', async () => {
      const person = await contact();
      const asPrimary = await deal({ contact_id: person });
      const asUser = await deal();
      expect((await stack.api.post(`/deals/${asUser}/contacts`, { contact_id: person, role: 'user' })).status).toBe(201);
      const batch = await stack.api.post('/deals/batch', {
        operation: 'create',
        items: [{ name: `B ${tag()}`, pipeline_id: pipelineId, stage_id: stageId, contact_id: person }],
      });
      expect(batch.status).toBe(200);
      const fromBatch = batch.body.data[0].data.id;
      await deal();

      const deals = await stack.api.listAll<Record<string, any>>(`/contacts/${person}/deals`);
      expect(deals.map((d) => d.id).sort()).toEqual([asPrimary, asUser, fromBatch].sort());
      expect(deals.find((d) => d.id === asPrimary)!.association).toEqual({ role: null, is_primary: true });
      expect(deals.find((d) => d.id === asUser)!.association).toEqual({ role: 'user', is_primary: false });
      expect(deals.find((d) => d.id === fromBatch)!.association).toEqual({ role: null, is_primary: true });

      // A batch update of contact_id moves the primary association as PATCH does.
      const other = await contact();
      const moved = await stack.api.post('/deals/batch', { operation: 'update', items: [{ id: fromBatch, contact_id: other }] });
      expect(moved.body.data[0].status).toBe(200);
      expect(await dealContacts(fromBatch)).toEqual([expect.objectContaining({ contact_id: other, is_primary: true })]);
      expect((await stack.api.listAll(`/contacts/${person}/deals`)).map((d: any) => d.id).sort()).toEqual([asPrimary, asUser].sort());
    });

    it('emits an event for each add, change and remove, with both ids and the role, and records them in the deal history', async () => {
      const dealId = await deal();
      const person = await contact();
      await stack.api.post(`/deals/${dealId}/contacts`, { contact_id: person, role: 'champion' });
      await stack.api.patch(`/deals/${dealId}/contacts/${person}`, { role: 'user' });
      await stack.api.patch(`/deals/${dealId}/contacts/${person}`, { role: 'user' });
      await stack.api.delete(`/deals/${dealId}/contacts/${person}`);

      const events = await eventually(async () => {
        const found = await eventsAbout('deal.contact_added,deal.contact_updated,deal.contact_removed', (d) => d.deal_id === dealId);
        return found.length >= 3 ? found : undefined;
      });
      expect(events.map((e) => e.type)).toEqual(['deal.contact_added', 'deal.contact_updated', 'deal.contact_removed']);
      expect(events[0].data).toEqual({ deal_id: dealId, contact_id: person, role: 'champion', is_primary: false });
      expect(events[1].data).toMatchObject({
        deal_id: dealId,
        contact_id: person,
        role: 'user',
        changed: ['role'],
        previous: { role: 'champion' },
        current: { role: 'user' },
      });
      expect(events[2].data).toEqual({ deal_id: dealId, contact_id: person, role: 'user', is_primary: false });

      const history = (await stack.api.get(`/deals/${dealId}/changes?field=contacts`)).body.data;
      expect(history.map((h: any) => h.changed)).toEqual([[`contacts.${person}`], [`contacts.${person}`], [`contacts.${person}`]]);
      expect(history[0].current[`contacts.${person}`]).toEqual({ role: 'champion', is_primary: false });
      expect(history[2].previous[`contacts.${person}`]).toEqual({ role: 'user', is_primary: false });
    });

    it("removes a deleted deal's associations at once, and a deleted contact's from every deal soon after, with events", async () => {
      const person = await contact();
      const kept = await deal({ contact_id: person });
      const gone = await deal();
      await stack.api.post(`/deals/${gone}/contacts`, { contact_id: person, role: 'user' });
      expect((await stack.api.delete(`/deals/${gone}`)).status).toBe(204);
      expect((await stack.api.listAll(`/contacts/${person}/deals`)).map((d: any) => d.id)).toEqual([kept]);
      const removedWithDeal = await eventually(async () => {
        const found = await eventsAbout('deal.contact_removed', (d) => d.deal_id === gone);
        return found.length ? found : undefined;
      });
      expect(removedWithDeal[0].data).toMatchObject({ contact_id: person, role: 'user' });

      // The contact's deletion reaches the deals service through contact.deleted: wait for its signal.
      expect((await stack.api.delete(`/contacts/${person}`)).status).toBe(204);
      const removed = await eventually(async () => {
        const found = await eventsAbout('deal.contact_removed', (d) => d.deal_id === kept && d.contact_id === person);
        return found.length ? found : undefined;
      }, 60_000);
      expect(removed[0].data).toMatchObject({ is_primary: true });
      expect(await dealContacts(kept)).toEqual([]);
      expect((await stack.api.get(`/deals/${kept}`)).body.data.contact_id).toBeNull();
      // Longer than its waits together, so a wait that runs out reports what it waited for.
    }, 180_000);
  });

  describe('contact companies', () => {
    it('adds companies with roles, lists them from both sides, keeps company_id naming the primary', async () => {
      const employer = await company('Employer');
      const advised = await company('Advised');
      const person = await contact();
      expect((await stack.api.patch(`/contacts/${person}`, { company_id: employer })).status).toBe(200);

      const added = await stack.api.post(`/contacts/${person}/companies`, { company_id: advised, role: 'advisor' });
      expect(added.status).toBe(201);
      expect(Object.keys(added.body.data).sort()).toEqual(['company_id', 'contact_id', 'created_at', 'is_primary', 'role']);
      expect(added.body.data).toMatchObject({ contact_id: person, company_id: advised, role: 'advisor', is_primary: false });
      expect((await stack.api.post(`/contacts/${person}/companies`, { company_id: advised })).status).toBe(409);
      const unknown = await stack.api.post(`/contacts/${person}/companies`, { company_id: 'comp_01aaaaaaaaaaaaaaaaaaaaaaaa' });
      expect(unknown.status).toBe(404);
      expect(unknown.body.error.details).toEqual([expect.objectContaining({ field: 'company_id', code: 'not_found' })]);

      const listed = await contactCompanies(person);
      expect(listed.map((a) => [a.company_id, a.is_primary, a.role]).sort()).toEqual(
        [
          [advised, false, 'advisor'],
          [employer, true, null],
        ].sort(),
      );
      expect(listed.find((a) => a.company_id === advised)!.company).toMatchObject({ type: 'company', id: advised });

      const members = await stack.api.listAll<Record<string, any>>(`/companies/${advised}/contacts`);
      expect(members).toEqual([
        expect.objectContaining({ contact_id: person, company_id: advised, role: 'advisor', contact: { type: 'contact', id: person, name: 'Pat Lee' } }),
      ]);
      expect((await stack.api.get(`/companies/comp_01aaaaaaaaaaaaaaaaaaaaaaaa/contacts`)).status).toBe(404);

      // is_primary moves company_id.
      expect((await stack.api.patch(`/contacts/${person}/companies/${advised}`, { is_primary: true })).status).toBe(200);
      expect((await stack.api.get(`/contacts/${person}`)).body.data.company_id).toBe(advised);
      expect((await contactCompanies(person)).filter((a) => a.is_primary).map((a) => a.company_id)).toEqual([advised]);

      // Removing the primary clears company_id.
      expect((await stack.api.delete(`/contacts/${person}/companies/${advised}`)).status).toBe(204);
      expect((await stack.api.get(`/contacts/${person}`)).body.data.company_id).toBeNull();
      expect((await contactCompanies(person)).map((a) => a.company_id)).toEqual([employer]);
    });

    it('follows company_id set by create and batch upsert, and removes associations when a company is deleted', async () => {
      const acme = await company();
      const person = (await stack.api.post('/contacts', { email: `c-${tag()}@assoc.example`, company_id: acme })).body.data.id;
      expect(await contactCompanies(person)).toEqual([expect.objectContaining({ company_id: acme, is_primary: true })]);

      const email = `u-${tag()}@assoc.example`;
      const upsert = await stack.api.post('/contacts/batch', { operation: 'upsert', items: [{ email, company_id: acme }] });
      expect(upsert.body.data[0].status).toBe(201);
      const upserted = upsert.body.data[0].data.id;
      expect(await contactCompanies(upserted)).toEqual([expect.objectContaining({ company_id: acme, is_primary: true })]);

      const side = await company('Side');
      await stack.api.post(`/contacts/${person}/companies`, { company_id: side, role: 'board' });
      expect((await stack.api.delete(`/companies/${side}`)).status).toBe(204);
      expect((await contactCompanies(person)).map((a) => a.company_id)).toEqual([acme]);
      const removed = await eventually(async () => {
        const found = await eventsAbout('contact.company_removed', (d) => d.company_id === side);
        return found.length ? found : undefined;
      });
      expect(removed[0].data).toEqual({ contact_id: person, company_id: side, role: 'board', is_primary: false });
    });
  });

  describe('merge', () => {
    it("moves the loser's deal and company associations to the winner, without duplicates", async () => {
      const winner = await contact('Winner');
      const loser = await contact('Loser');
      const shared = await deal({ contact_id: loser });
      const both = await deal({ contact_id: winner });
      await stack.api.post(`/deals/${both}/contacts`, { contact_id: loser, role: 'champion' });
      const onlyLoser = await deal();
      await stack.api.post(`/deals/${onlyLoser}/contacts`, { contact_id: loser, role: 'user' });

      const employer = await company('Emp');
      const board = await company('Board');
      await stack.api.patch(`/contacts/${loser}`, { company_id: employer });
      await stack.api.post(`/contacts/${loser}/companies`, { company_id: board, role: 'board' });
      await stack.api.post(`/contacts/${winner}/companies`, { company_id: board });

      const merged = await stack.api.post('/contacts/merge', { winner_id: winner, loser_id: loser });
      expect(merged.status).toBe(200);

      const deals = await stack.api.listAll<Record<string, any>>(`/contacts/${winner}/deals`);
      expect(deals.map((d) => [d.id, d.association]).sort()).toEqual(
        [
          [shared, { role: null, is_primary: true }],
          [both, { role: 'champion', is_primary: true }],
          [onlyLoser, { role: 'user', is_primary: false }],
        ].sort(),
      );
      expect(await dealContacts(both)).toHaveLength(1);
      expect((await stack.api.get(`/deals/${shared}`)).body.data.contact_id).toBe(winner);

      // The winner had no company: it takes the loser's as primary; the shared one keeps one row and gains the role.
      expect((await stack.api.get(`/contacts/${winner}`)).body.data.company_id).toBe(employer);
      const companies = await contactCompanies(winner);
      expect(companies.map((a) => [a.company_id, a.is_primary, a.role]).sort()).toEqual(
        [
          [board, false, 'board'],
          [employer, true, null],
        ].sort(),
      );
      expect((await stack.api.get(`/contacts/${loser}/companies`)).status).toBe(404);

      // Retrying the merge changes nothing twice.
      expect((await stack.api.post('/contacts/merge', { winner_id: winner, loser_id: loser })).status).toBe(404);
    });
  });

  describe('labels', () => {
    it('lists association types in /schema and restricts roles to the labels once set', async () => {
      const schema = (await stack.api.get('/schema')).body.data;
      expect(schema.associations.map((a: any) => [a.type, a.from, a.to])).toEqual([
        ['contact_companies', 'contacts', 'companies'],
        ['deal_contacts', 'deals', 'contacts'],
      ]);

      const set = await stack.api.patch('/schema/associations/deal_contacts', { labels: ['champion', 'decision_maker', 'user'] });
      expect(set.status).toBe(200);
      expect(set.body.data).toMatchObject({ type: 'deal_contacts', labels: ['champion', 'decision_maker', 'user'] });
      expect((await stack.api.get('/schema')).body.data.associations.find((a: any) => a.type === 'deal_contacts').labels).toEqual([
        'champion',
        'decision_maker',
        'user',
      ]);

      const dealId = await deal();
      const person = await contact();
      const refused = await stack.api.post(`/deals/${dealId}/contacts`, { contact_id: person, role: 'mascot' });
      expect(refused.status).toBe(400);
      expect(refused.body.error.details).toEqual([expect.objectContaining({ field: 'role', code: 'invalid_value' })]);
      expect((await stack.api.post(`/deals/${dealId}/contacts`, { contact_id: person, role: 'champion' })).status).toBe(201);
      expect((await stack.api.patch(`/deals/${dealId}/contacts/${person}`, { role: 'mascot' })).status).toBe(400);

      const companyLabels = await stack.api.patch('/schema/associations/contact_companies', { labels: ['employee', 'advisor'] });
      expect(companyLabels.status).toBe(200);
      const person2 = await contact();
      const acme = await company();
      expect((await stack.api.post(`/contacts/${person2}/companies`, { company_id: acme, role: 'mascot' })).status).toBe(400);
      expect((await stack.api.post(`/contacts/${person2}/companies`, { company_id: acme, role: 'advisor' })).status).toBe(201);

      expect((await stack.api.patch('/schema/associations/deal_pets', { labels: [] })).status).toBe(404);
      expect((await stack.api.patch('/schema/associations/deal_contacts', { labels: ['a', 'a'] })).status).toBe(400);
      expect((await stack.api.patch('/schema/associations/deal_contacts', { labels: 'champion' })).status).toBe(400);

      // An empty list allows any role again.
      expect((await stack.api.patch('/schema/associations/deal_contacts', { labels: [] })).status).toBe(200);
      expect((await stack.api.patch('/schema/associations/contact_companies', { labels: [] })).status).toBe(200);
      expect((await stack.api.patch(`/deals/${dealId}/contacts/${person}`, { role: 'mascot' })).status).toBe(200);
    });
  });
});
