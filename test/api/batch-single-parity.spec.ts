import { randomBytes } from 'crypto';
import { eventually } from '../support/api-client';
import { startStack, TestStack } from '../support/stack';

const tag = () => randomBytes(5).toString('hex');

/** A batch item answers and emits exactly what its single write does, where the two once differed. */
describe('Batch items and single writes agree', () => {
  let stack: TestStack;
  let pipeline: { id: string; stages: Array<{ id: string }> };

  beforeAll(async () => {
    stack = await startStack({ services: ['contacts', 'deals', 'events'] });
    pipeline = (
      await stack.api.post('/pipelines', {
        name: `Parity ${tag()}`,
        stages: [
          { name: 'New', type: 'open' },
          { name: 'Won', type: 'won' },
        ],
      })
    ).body.data;
  });
  afterAll(() => stack.stop());

  it('answers an update naming an unknown deal and an unknown contact with the contact error, single or batched', async () => {
    const unknownDeal = 'deal_00000000000000000000000000';
    const body = { contact_id: 'cont_00000000000000000000000000' };
    const single = await stack.api.patch(`/deals/${unknownDeal}`, body);
    const batch = await stack.api.post('/deals/batch', { operation: 'update', items: [{ id: unknownDeal, ...body }] });
    expect(single.status).toBe(400);
    expect(batch.body.data[0]).toEqual({ index: 0, status: single.status, error: single.body.error });
    expect(single.body.error.details[0]).toMatchObject({ field: 'contact_id', code: 'not_found' });
  });

  it('asks for stage_id when an update changes the pipeline alone, whether or not that pipeline exists, single or batched', async () => {
    const deal = (await stack.api.post('/deals', { name: 'P', pipeline_id: pipeline.id, stage_id: pipeline.stages[0].id })).body.data;
    const body = { pipeline_id: 'pipe_00000000000000000000000000' };
    const single = await stack.api.patch(`/deals/${deal.id}`, body);
    const batch = await stack.api.post('/deals/batch', { operation: 'update', items: [{ id: deal.id, ...body }] });
    expect(single.status).toBe(400);
    expect(single.body.error.details[0]).toMatchObject({ field: 'stage_id', code: 'required' });
    expect(batch.body.data[0]).toEqual({ index: 0, status: single.status, error: single.body.error });
  });

  it('emits deal.created, the contact association, then deal.won for a deal created into a won stage, single or batched', async () => {
    const contact = (await stack.api.post('/contacts', { email: `parity-${tag()}@parity.example` })).body.data;
    const body = { name: 'Won at once', pipeline_id: pipeline.id, stage_id: pipeline.stages[1].id, contact_id: contact.id };
    const single = (await stack.api.post('/deals', body)).body.data.id;
    const batched = (await stack.api.post('/deals/batch', { operation: 'create', items: [body] })).body.data[0].data.id;
    // A marker deal made after both: once its deal.created is in the log, every event of the two is too,
    // so an extra or repeated one would be read below rather than arrive after the check.
    const marker = (await stack.api.post('/deals', { name: 'Parity marker', pipeline_id: pipeline.id, stage_id: pipeline.stages[0].id })).body.data.id;
    const logged = await eventually(async () => {
      const found = await stack.api.listAll('/events?type=deal.created,deal.contact_added,deal.won');
      return found.some((e) => e.data.deal_id === marker) ? found : undefined;
    }, 120_000);
    for (const id of [single, batched]) {
      expect(logged.filter((e) => e.data.deal_id === id).map((e) => e.type)).toEqual(['deal.created', 'deal.contact_added', 'deal.won']);
    }
  });
});
