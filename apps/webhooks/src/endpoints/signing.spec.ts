import { Webhook } from 'standardwebhooks';
import { generateSigningSecret, signedHeaders } from './signing';

describe('signedHeaders', () => {
  const body = '{"id":"evt_1","type":"contact.created","data":{}}';
  const at = new Date('2026-12-07T08:00:00.250Z');

  it('signs with every secret, each verifiable by the standardwebhooks library', () => {
    const [a, b] = [generateSigningSecret(), generateSigningSecret()];
    const headers = signedHeaders([a, b], 'evt_1', body, at);
    const [first, second] = headers['webhook-signature'].split(' ');
    expect(first).not.toEqual(second);
    // verify checks the timestamp against now: signed now for this check.
    const now = signedHeaders([a, b], 'evt_1', body);
    expect(() => new Webhook(a).verify(body, now)).not.toThrow();
    expect(() => new Webhook(b).verify(body, now)).not.toThrow();
    expect(() => new Webhook(generateSigningSecret()).verify(body, now)).toThrow();
  });

  it('gives the same signature for the same secret, message and body in one second, and a new one otherwise', () => {
    const secret = generateSigningSecret();
    const sign = (id: string, text: string, when: Date) => signedHeaders([secret], id, text, when)['webhook-signature'];
    const first = sign('evt_1', body, at);
    expect(sign('evt_1', body, new Date(at.getTime() + 500))).toBe(first);
    expect(first).toBe(`v1,${new Webhook(secret).sign('evt_1', at, body).split(',')[1]}`);
    expect(sign('evt_2', body, at)).not.toBe(first);
    expect(sign('evt_1', `${body} `, at)).not.toBe(first);
    expect(sign('evt_1', body, new Date(at.getTime() + 1000))).not.toBe(first);
    expect(signedHeaders([generateSigningSecret()], 'evt_1', body, at)['webhook-signature']).not.toBe(first);
  });
});
