import { ConfigError, derivedCursorSecret, loadBaseConfig, loadCursorSecrets } from './config';
import { CursorCodec, cursorValueFits, idKey, positionKey } from './cursors';

const SECRET = 'a cursor secret of forty-odd characters, for tests';
const codec = new CursorCodec([SECRET]);
const CONTACT = 'cont_01m8cy9yfbkzsq24f5rb61270v';

function refusal(decode: () => unknown): unknown {
  try {
    decode();
  } catch (err) {
    return err;
  }
  return undefined;
}

const INVALID = { code: 'invalid_request', details: [{ field: 'cursor', code: 'invalid_cursor' }] };

describe('CursorCodec', () => {
  it('round-trips the key of the list a cursor belongs to', () => {
    expect(codec.decode('contacts', codec.encode('contacts', CONTACT), idKey())).toBe(CONTACT);
    expect(codec.decode('events', codec.encode('events', 1234), positionKey)).toBe(1234);
    expect(codec.decode('events', undefined, positionKey)).toBeUndefined();
    expect(codec.decode('events', '', positionKey)).toBeUndefined();
  });

  it('issues cursors that need no escaping in a query string', () => {
    expect(codec.encode('contacts?sort=-created_at', { k: ['2026-11-26 22:06:06.315+00'], id: CONTACT })).toMatch(/^[A-Za-z0-9_.-]+$/);
  });

  it('refuses a cursor it did not sign: unsigned, edited, signed under another secret, or of an older build', () => {
    const genuine = codec.encode('contacts', CONTACT);
    const [body, tag] = genuine.split('.');
    const edited = Buffer.from(JSON.stringify({ l: 'contacts', k: 'cont_01m8cy9yfbkzsq24f5rb61270w' })).toString('base64url');
    const flipped = `${tag.slice(0, 10)}${tag[10] === 'A' ? 'B' : 'A'}${tag.slice(11)}`;
    const forged = [
      body,
      `${edited}.${tag}`,
      `${body}.${flipped}`,
      `${body}.${tag.slice(1)}`,
      new CursorCodec(['another deployment entirely, another secret']).encode('contacts', CONTACT),
      // What builds before signed cursors issued.
      Buffer.from(JSON.stringify({ l: 'contacts', k: CONTACT })).toString('base64url'),
      'not a cursor!',
      `${genuine}.${tag}`,
    ];
    for (const raw of forged) expect(refusal(() => codec.decode('contacts', raw, idKey()))).toMatchObject(INVALID);
  });

  it('refuses a genuine cursor of another list, or whose key is not the type the list expects', () => {
    expect(refusal(() => codec.decode('contacts', codec.encode('deals', CONTACT), idKey()))).toMatchObject(INVALID);
    expect(refusal(() => codec.decode('contacts', codec.encode('contacts', 12), idKey()))).toMatchObject(INVALID);
    expect(refusal(() => codec.decode('contacts', codec.encode('contacts', 'cont_x'), idKey()))).toMatchObject(INVALID);
    expect(refusal(() => codec.decode('contacts', codec.encode('contacts', CONTACT), idKey('deal')))).toMatchObject(INVALID);
    expect(refusal(() => codec.decode('contacts', codec.encode('contacts', 'a\u0000b'), idKey()))).toMatchObject(INVALID);
    for (const position of [2 ** 60, -1, 1.5, '12']) {
      expect(refusal(() => codec.decode('events', codec.encode('events', position), positionKey))).toMatchObject(INVALID);
    }
  });

  it('verifies with every secret it is given and signs with the first, so a secret can be replaced', () => {
    const before = new CursorCodec(['the secret before the rotation, long enough']);
    const during = new CursorCodec(['the secret after the rotation, long enough too', 'the secret before the rotation, long enough']);
    const issued = before.encode('contacts', CONTACT);
    expect(during.decode('contacts', issued, idKey())).toBe(CONTACT);
    expect(refusal(() => before.decode('contacts', during.encode('contacts', CONTACT), idKey()))).toMatchObject(INVALID);
  });
});

describe('cursorValueFits', () => {
  it('accepts what PostgreSQL writes for each type', () => {
    for (const value of [
      '2026-11-26 22:06:06.315+00',
      '2026-11-26 23:06:06+01',
      '2026-02-28 00:00:00.123456+05:30',
      '0044-03-15 12:00:00+00 BC',
      '2026-11-26 24:00:00+00',
      'infinity',
      '-infinity',
    ]) {
      expect({ value, fits: cursorValueFits('timestamptz', value) }).toEqual({ value, fits: true });
    }
    for (const value of ['0', '-12', '12.50', '1e+20', '1.5e-07', 'NaN', '-Infinity', `1${'0'.repeat(300)}`])
      expect({ value, fits: cursorValueFits('numeric', value) }).toEqual({ value, fits: true });
    for (const value of ['0', '-9223372036854775808', '9223372036854775807'])
      expect({ value, fits: cursorValueFits('bigint', value) }).toEqual({ value, fits: true });
    expect(cursorValueFits('boolean', 'true') && cursorValueFits('boolean', 'false')).toBe(true);
    expect(cursorValueFits('text', "O'Brien; DROP TABLE x -- ✓")).toBe(true);
  });

  it('refuses what PostgreSQL would fail to read as the type', () => {
    for (const value of [
      'not-a-date',
      '2026-02-30 00:00:00+00',
      '2026-13-01 00:00:00+00',
      '2026-11-26 25:00:00+00',
      '2026-11-26 24:00:01+00',
      '2026-11-26',
      '',
    ]) {
      expect({ value, fits: cursorValueFits('timestamptz', value) }).toEqual({ value, fits: false });
    }
    for (const value of ['ten', '1,5', '', '0x10', '1e']) expect({ value, fits: cursorValueFits('numeric', value) }).toEqual({ value, fits: false });
    for (const value of ['9223372036854775808', '-9223372036854775809', '1.5', ''])
      expect({ value, fits: cursorValueFits('bigint', value) }).toEqual({ value, fits: false });
    expect(cursorValueFits('boolean', 'yes')).toBe(false);
    expect(cursorValueFits('text', 'a\u0000b')).toBe(false);
  });
});

describe('CURSOR_SECRET', () => {
  const url = 'postgres://crm_app:pw@db.internal:5432/crm';

  it('is required where DATABASE_URL carries a password, so rotating the password keeps the cursors clients hold', () => {
    for (const env of [{}, { CURSOR_SECRET: '' }]) {
      const error = refusal(() => loadCursorSecrets(env, url));
      expect(error).toBeInstanceOf(ConfigError);
      expect(String(error)).toContain('CURSOR_SECRET is required when DATABASE_URL carries a password');
      expect(String(error)).not.toContain('pw');
    }
    expect(() => loadBaseConfig({ DATABASE_URL: url })).toThrow(ConfigError);
    const secret = 's'.repeat(44);
    expect(loadBaseConfig({ DATABASE_URL: url, CURSOR_SECRET: secret }).cursorSecrets).toEqual([secret]);
    expect(loadBaseConfig({ DATABASE_URL: 'postgres://crm_app:rotated@db.internal:5432/crm', CURSOR_SECRET: secret }).cursorSecrets).toEqual([secret]);
  });

  it('without a password in DATABASE_URL (one machine), defaults to a secret derived from it, the same for every process', () => {
    const local = 'postgres://postgres@127.0.0.1:5432/crm';
    const [derived] = loadCursorSecrets({}, local);
    expect(derived).toBe(derivedCursorSecret(local));
    expect(loadCursorSecrets({ CURSOR_SECRET: '' }, local)).toEqual([derived]);
    expect(loadCursorSecrets({}, 'postgres://postgres@127.0.0.1:5432/other')).not.toEqual([derived]);
    expect(loadBaseConfig({ DATABASE_URL: local }).cursorSecrets).toEqual([derived]);
  });

  it('takes one or more secrets, the current first, and refuses a short one without echoing it', () => {
    const a = 'a'.repeat(32);
    const b = 'b'.repeat(44);
    expect(loadCursorSecrets({ CURSOR_SECRET: `${a}, ${b}` }, url)).toEqual([a, b]);
    const error = refusal(() => loadCursorSecrets({ CURSOR_SECRET: `${a},REPLACE_ME` }, url));
    expect(error).toBeInstanceOf(ConfigError);
    expect(String(error)).toContain('CURSOR_SECRET');
    expect(String(error)).not.toContain('REPLACE_ME');
  });
});
