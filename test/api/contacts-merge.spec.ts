import { IdPrefix, newId } from '@crm/common';
import { DomainEvent, EventType, eventSubject, Ops, rpcSubject } from '@crm/contracts';
import { randomBytes } from 'crypto';
import { connect, JSONCodec } from 'nats';
import { eventually } from '../support/api-client';
import { startStack, TestStack } from '../support/stack';

/** Merge and everything else that crosses into the deals service, on the whole system. */
describe('Contacts with deals: merge, deal lists and deletion', () => {
  let stack: TestStack;
  let pipelineId: string;
  let stageId: string;
  const email = (label: string) => `${label}.${randomBytes(5).toString('hex')}@example.com`;
  const contact = async (fields: Record<string, unknown> = {}) => {
    const res = await stack.api.post('/contacts', { email: email('m'), ...fields });
    expect(res.status).toBe(201);
    return res.body.data as { id: string; email: string };
  };
  const deal = async (contactId: string, name = 'Deal') => {
    const res = await stack.api.post('/deals', { name, pipeline_id: pipelineId, stage_id: stageId, contact_id: contactId, value: 1000 });
    expect(res.status).toBe(201);
    return res.body.data as { id: string };
  };
  const ids = (items: { id: string }[]) => items.map((i) => i.id).sort();

  beforeAll(async () => {
    stack = await startStack();
    const pipeline = await stack.api.post('/pipelines', {
      name: 'Sales',
      stages: [
        { name: 'New', type: 'open' },
        { name: 'Won', type: 'won' },
      ],
    });
    expect(pipeline.status).toBe(201);
    pipelineId = pipeline.body.data.id;
    stageId = pipeline.body.data.stages[0].id;
  });
  afterAll(() => stack.stop());

  describe('GET /contacts/:id/deals', () => {
    it("lists the contact's deals in the spec's subset plus how each is associated, with paging", async () => {
      const c = await contact();
      const d1 = await deal(c.id, 'First');
      const d2 = await deal(c.id, 'Second');
      const res = await stack.api.get(`/contacts/${c.id}/deals`);
      expect(res.status).toBe(200);
      expect(res.body.has_more).toBe(false);
      expect(res.body.data.map((d: { id: string }) => d.id)).toEqual([d1.id, d2.id]);
      expect(Object.keys(res.body.data[0]).sort()).toEqual([
        'association',
        'created_at',
        'currency',
        'id',
        'name',
        'pipeline_id',
        'stage_id',
        'status',
        'updated_at',
        'value',
      ]);
      const first = await stack.api.get(`/contacts/${c.id}/deals?limit=1`);
      expect(first.body).toMatchObject({ has_more: true, data: [{ id: d1.id }] });
      const second = await stack.api.get(`/contacts/${c.id}/deals?limit=1&cursor=${first.body.next_cursor}`);
      expect(second.body.data.map((d: { id: string }) => d.id)).toEqual([d2.id]);
      expect(second.body.has_more).toBe(false);
    });

    it('answers 404 for an unknown contact and 400 for a bad limit', async () => {
      expect((await stack.api.get('/contacts/cont_01aaaaaaaaaaaaaaaaaaaaaaaa/deals')).status).toBe(404);
      const c = await contact();
      expect((await stack.api.get(`/contacts/${c.id}/deals?limit=201`)).status).toBe(400);
    });
  });

  describe('activities and tasks of a deal', () => {
    it('links activities and tasks to deals and lists them under the deal', async () => {
      const c = await contact();
      const d = await deal(c.id);
      const activity = await stack.api.post('/activities', { type: 'call', deal_id: d.id, contact_id: c.id });
      expect(activity.status).toBe(201);
      const task = await stack.api.post('/tasks', { title: 'Prepare quote', deal_id: d.id });
      expect(task.status).toBe(201);
      const activities = await stack.api.get(`/deals/${d.id}/activities`);
      expect(activities.status).toBe(200);
      expect(activities.body).toEqual({
        data: [
          {
            id: activity.body.data.id,
            type: 'call',
            status: 'completed',
            subject: null,
            occurred_at: activity.body.data.occurred_at,
            created_at: activity.body.data.created_at,
            updated_at: activity.body.data.updated_at,
          },
        ],
        has_more: false,
      });
      const tasks = await stack.api.get(`/deals/${d.id}/tasks`);
      expect(tasks.body.data.map((t: { id: string }) => t.id)).toEqual([task.body.data.id]);
      expect(Object.keys(tasks.body.data[0]).sort()).toEqual(['created_at', 'due_at', 'id', 'priority', 'status', 'title', 'updated_at']);
    });

    it('rejects an unknown deal_id and answers 404 for an unknown deal', async () => {
      const res = await stack.api.post('/activities', { type: 'call', deal_id: 'deal_01aaaaaaaaaaaaaaaaaaaaaaaa' });
      expect(res.status).toBe(400);
      expect(res.body.error.details).toEqual([expect.objectContaining({ field: 'deal_id', code: 'not_found' })]);
      expect((await stack.api.post('/tasks', { title: 't', deal_id: 'deal_01aaaaaaaaaaaaaaaaaaaaaaaa' })).status).toBe(400);
      expect((await stack.api.get('/deals/deal_01aaaaaaaaaaaaaaaaaaaaaaaa/activities')).status).toBe(404);
      expect((await stack.api.get('/deals/deal_01aaaaaaaaaaaaaaaaaaaaaaaa/tasks')).status).toBe(404);
      expect((await stack.api.get('/deals/nonsense/tasks')).status).toBe(404);
    });
  });

  describe('deleting a contact', () => {
    it('keeps work shared with a deal (unlinked), deletes the rest, and its deals lose the contact', async () => {
      const c = await contact();
      const d = await deal(c.id);
      const shared = (await stack.api.post('/activities', { type: 'meeting', contact_id: c.id, deal_id: d.id })).body.data;
      const own = (await stack.api.post('/activities', { type: 'note', contact_id: c.id })).body.data;
      const sharedTask = (await stack.api.post('/tasks', { title: 'deal task', contact_id: c.id, deal_id: d.id })).body.data;
      expect((await stack.api.delete(`/contacts/${c.id}`)).status).toBe(204);
      expect((await stack.api.get(`/activities/${own.id}`)).status).toBe(404);
      expect((await stack.api.get(`/activities/${shared.id}`)).body.data).toMatchObject({ contact_id: null, deal_id: d.id });
      expect((await stack.api.get(`/tasks/${sharedTask.id}`)).body.data).toMatchObject({ contact_id: null, deal_id: d.id });
      const unlinked = await eventually(async () => {
        const res = await stack.api.get(`/deals/${d.id}`);
        return res.status === 200 && res.body.data.contact_id === null ? res.body.data : undefined;
      });
      expect(unlinked.id).toBe(d.id);
    });
  });

  describe('deleting a deal', () => {
    it('detaches its activities and tasks held by a contact and deletes those of the deal alone', async () => {
      const c = await contact();
      const d = await deal(c.id);
      const shared = (await stack.api.post('/activities', { type: 'call', contact_id: c.id, deal_id: d.id })).body.data;
      const dealOnly = (await stack.api.post('/activities', { type: 'note', deal_id: d.id })).body.data;
      const task = (await stack.api.post('/tasks', { title: 'deal only', deal_id: d.id })).body.data;
      expect((await stack.api.delete(`/deals/${d.id}`)).status).toBe(204);
      await eventually(async () => ((await stack.api.get(`/activities/${dealOnly.id}`)).status === 404 ? true : undefined));
      await eventually(async () => ((await stack.api.get(`/tasks/${task.id}`)).status === 404 ? true : undefined));
      const kept = await eventually(async () => {
        const res = await stack.api.get(`/activities/${shared.id}`);
        return res.body.data.deal_id === null ? res.body.data : undefined;
      });
      expect(kept).toMatchObject({ contact_id: c.id, deal_id: null });
      expect((await stack.api.get(`/contacts/${c.id}/activities`)).body.data.map((a: { id: string }) => a.id)).toEqual([shared.id]);
    });
  });

  describe('POST /contacts/merge', () => {
    it('moves deals, activities and tasks to the winner, fills its empty fields and deletes the loser', async () => {
      const company = (await stack.api.post('/companies', { name: 'Merged Co' })).body.data;
      const winner = await contact({ first_name: 'Win', stage: 'customer', metadata: { a: 'winner', keep: 1 } });
      const loser = await contact({
        first_name: 'Lose',
        last_name: 'Smith',
        phone: '+1 555 0100',
        stage: 'lead',
        company_id: company.id,
        icp_score: 70,
        icp_score_reason: 'fit',
        metadata: { a: 'loser', extra: true },
      });
      const winnerDeal = await deal(winner.id, 'W');
      const loserDeals = [await deal(loser.id, 'L1'), await deal(loser.id, 'L2')];
      const activity = (await stack.api.post('/activities', { type: 'email', contact_id: loser.id })).body.data;
      const task = (await stack.api.post('/tasks', { title: 'call', contact_id: loser.id })).body.data;
      const loserFull = (await stack.api.get(`/contacts/${loser.id}`)).body.data;

      const res = await stack.api.post('/contacts/merge', { winner_id: winner.id, loser_id: loser.id });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({
        id: winner.id,
        email: winner.email,
        first_name: 'Win',
        last_name: 'Smith',
        phone: '+1 555 0100',
        stage: 'customer',
        company_id: company.id,
        icp_score: 70,
        icp_score_reason: 'fit',
        icp_scored_at: loserFull.icp_scored_at,
        metadata: { a: 'winner', keep: 1, extra: true },
        relationships: { company: { type: 'company', id: company.id, name: 'Merged Co' }, owner: null },
      });
      expect(res.body.included).toEqual([{ type: 'company', id: company.id, name: 'Merged Co' }]);
      expect((await stack.api.get(`/contacts/${winner.id}`)).body.data).toEqual(res.body.data);

      // Visible at once, not eventually.
      expect((await stack.api.get(`/contacts/${loser.id}`)).status).toBe(404);
      const deals = await stack.api.get(`/contacts/${winner.id}/deals`);
      expect(ids(deals.body.data)).toEqual(ids([winnerDeal, ...loserDeals]));
      expect((await stack.api.get(`/activities/${activity.id}`)).body.data.contact_id).toBe(winner.id);
      expect((await stack.api.get(`/tasks/${task.id}`)).body.data.contact_id).toBe(winner.id);
      expect(ids((await stack.api.get(`/contacts/${winner.id}/activities`)).body.data)).toEqual([activity.id]);
      expect(ids((await stack.api.get(`/contacts/${winner.id}/tasks`)).body.data)).toEqual([task.id]);
      expect((await stack.api.get(`/deals/${loserDeals[0].id}`)).body.data.contact_id).toBe(winner.id);
      // The loser's email is free again.
      expect((await stack.api.post('/contacts', { email: loser.email })).status).toBe(201);

      const deleted = await eventually(async () =>
        (await stack.api.listAll('/events?type=contact.deleted')).find((e: { data: { contact_id: string } }) => e.data.contact_id === loser.id),
      );
      expect(deleted.data).toEqual({ contact_id: loser.id, merged_into: winner.id });
      const updated = await eventually(async () =>
        (await stack.api.listAll('/events?type=contact.updated')).find((e: { data: { contact_id: string } }) => e.data.contact_id === winner.id),
      );
      expect(updated.data.changed).toEqual(['last_name', 'phone', 'company_id', 'icp_score', 'icp_score_reason', 'icp_scored_at', 'metadata']);
    });

    it('refuses to merge a contact with itself, unknown contacts and incomplete bodies', async () => {
      const c = await contact();
      const self = await stack.api.post('/contacts/merge', { winner_id: c.id, loser_id: c.id });
      expect(self.status).toBe(400);
      expect(self.body.error.code).toBe('validation_failed');
      const unknown = 'cont_01aaaaaaaaaaaaaaaaaaaaaaaa';
      expect((await stack.api.post('/contacts/merge', { winner_id: c.id, loser_id: unknown })).status).toBe(404);
      expect((await stack.api.post('/contacts/merge', { winner_id: unknown, loser_id: c.id })).status).toBe(404);
      // A malformed id is the client's mistake, named; only a well-formed unknown one is a 404.
      const garbage = await stack.api.post('/contacts/merge', { winner_id: c.id, loser_id: 'garbage' });
      expect(garbage.status).toBe(400);
      expect(garbage.body.error.details).toEqual([expect.objectContaining({ field: 'loser_id', message: 'loser_id must be a cont_ identifier' })]);
      const missing = await stack.api.post('/contacts/merge', { winner_id: c.id });
      expect(missing.status).toBe(400);
      expect(missing.body.error.details).toEqual([expect.objectContaining({ field: 'loser_id', code: 'required' })]);
      expect((await stack.api.get(`/contacts/${c.id}`)).status).toBe(200);
    });

    it('lets only one of two opposite merges win, without deadlock', async () => {
      const a = await contact();
      const b = await contact();
      const [ab, ba] = await Promise.all([
        stack.api.post('/contacts/merge', { winner_id: a.id, loser_id: b.id }),
        stack.api.post('/contacts/merge', { winner_id: b.id, loser_id: a.id }),
      ]);
      expect([ab.status, ba.status].sort()).toEqual([200, 404]);
      const survivor = ab.status === 200 ? a : b;
      const removed = ab.status === 200 ? b : a;
      expect((await stack.api.get(`/contacts/${survivor.id}`)).status).toBe(200);
      expect((await stack.api.get(`/contacts/${removed.id}`)).status).toBe(404);
    });

    it('changes nothing when the deals service fails, and completes when retried', async () => {
      const winner = await contact();
      const loser = await contact({ first_name: 'Later' });
      const loserDeal = await deal(loser.id);
      const activity = (await stack.api.post('/activities', { type: 'note', contact_id: loser.id })).body.data;

      await stack.stopService('deals');
      try {
        const failed = await stack.api.post('/contacts/merge', { winner_id: winner.id, loser_id: loser.id });
        expect(failed.status).toBe(503);
        expect(failed.body.error.code).toBe('service_unavailable');
        expect((await stack.api.get(`/contacts/${loser.id}`)).status).toBe(200);
        expect((await stack.api.get(`/activities/${activity.id}`)).body.data.contact_id).toBe(loser.id);
        expect((await stack.api.get(`/contacts/${winner.id}`)).body.data.first_name).toBeNull();
      } finally {
        await stack.startService('deals');
      }

      const retried = await stack.api.post('/contacts/merge', { winner_id: winner.id, loser_id: loser.id });
      expect(retried.status).toBe(200);
      expect(retried.body.data.first_name).toBe('Later');
      expect(ids((await stack.api.get(`/contacts/${winner.id}/deals`)).body.data)).toEqual([loserDeal.id]);
      expect((await stack.api.get(`/contacts/${loser.id}`)).status).toBe(404);
    });

    it('locks neither contact while it waits for the deals service', async () => {
      const winner = await contact();
      const loser = await contact();
      const timeoutMs = stack.services.contacts!.config.rpcTimeoutMs;
      // A deals replica that takes the request and never answers: the merge waits its full timeout.
      await stack.stopService('deals');
      const nc = await connect({ servers: stack.env.NATS_URL });
      try {
        const sub = nc.subscribe(rpcSubject(stack.namespace, Ops.dealsInternal.reassignContact.name), { max: 1 });
        const asked = (async () => {
          for await (const _ of sub) return;
        })();
        await nc.flush();
        let mergeSettled = false;
        const merge = stack.api.post('/contacts/merge', { winner_id: winner.id, loser_id: loser.id }).finally(() => (mergeSettled = true));
        await asked;
        const started = Date.now();
        const [w, l] = await Promise.all([
          stack.api.patch(`/contacts/${winner.id}`, { first_name: 'Busy' }),
          stack.api.patch(`/contacts/${loser.id}`, { first_name: 'Also busy' }),
        ]);
        expect([w.status, l.status]).toEqual([200, 200]);
        expect(mergeSettled).toBe(false);
        expect(Date.now() - started).toBeLessThan(timeoutMs / 2);
        expect((await merge).status).toBe(503);
      } finally {
        await nc.close();
        await stack.startService('deals');
      }
    });

    it('moves a deal still linked to the merged contact when the deals service sees contact.deleted with merged_into', async () => {
      const winner = await contact();
      const loser = await contact();
      const straggler = await deal(loser.id, 'Linked during the merge');
      // The event a merge emits, as if the deal had been linked after the deals moved.
      const nc = await connect({ servers: stack.env.NATS_URL });
      try {
        const event: DomainEvent = {
          id: newId(IdPrefix.Event),
          type: EventType.ContactDeleted,
          occurred_at: new Date().toISOString(),
          data: { contact_id: loser.id, merged_into: winner.id },
        };
        await nc.jetstream().publish(eventSubject(stack.namespace, event.type), JSONCodec().encode(event), { msgID: event.id });
      } finally {
        await nc.close();
      }
      await eventually(async () => ((await stack.api.get(`/deals/${straggler.id}`)).body.data.contact_id === winner.id ? true : undefined));
      const updates = await eventually(async () => {
        const events = (await stack.api.listAll('/events?type=deal.updated')).filter((e) => e.data.deal_id === straggler.id);
        return events.length ? events : undefined;
      });
      expect(updates.map((e) => e.data.changed)).toEqual([['contact_id']]);
    });

    it('leaves every deal with the surviving contact after two opposite merges', async () => {
      const a = await contact();
      const b = await contact();
      const [da, db] = [await deal(a.id, 'A'), await deal(b.id, 'B')];
      const [ab, ba] = await Promise.all([
        stack.api.post('/contacts/merge', { winner_id: a.id, loser_id: b.id }),
        stack.api.post('/contacts/merge', { winner_id: b.id, loser_id: a.id }),
      ]);
      expect([ab.status, ba.status].sort()).toEqual([200, 404]);
      const survivor = ab.status === 200 ? a : b;
      await eventually(async () => {
        const owners = await Promise.all([da, db].map(async (d) => (await stack.api.get(`/deals/${d.id}`)).body.data.contact_id));
        return owners.every((o) => o === survivor.id) ? true : undefined;
      });
    });
  });
});
