import { anchorAfter, gapOf, RESTORED_STREAM, streamVerdict } from './stream-recovery';

describe('stream verdict', () => {
  const stream = { created: '2026-12-07T07:00:00.000000001Z', first_seq: 1, last_seq: 100 };

  it('reads on when the stream is the checkpoint’s and holds the next event', () => {
    expect(streamVerdict({ seq: 40, stream: stream.created }, stream)).toBeUndefined();
    expect(streamVerdict({ seq: 100, stream: stream.created }, stream)).toBeUndefined();
    // Everything read and then aged out: the stream is empty from the next sequence on.
    expect(streamVerdict({ seq: 100, stream: stream.created }, { ...stream, first_seq: 101 })).toBeUndefined();
  });

  it('adopts the stream for a checkpoint recorded without identity, when the stream fits it', () => {
    expect(streamVerdict({ seq: 0, stream: null }, { ...stream, first_seq: 0, last_seq: 0 })).toBe('adopt');
    expect(streamVerdict({ seq: 40, stream: null }, stream)).toBe('adopt');
  });

  it('names a stream made again, by identity or, without one, by a last sequence below the checkpoint', () => {
    expect(streamVerdict({ seq: 40, stream: 'an older stream' }, stream)).toMatchObject({ reason: 'replaced' });
    expect(streamVerdict({ seq: 400, stream: null }, stream)).toMatchObject({ reason: 'replaced' });
  });

  it('names events gone before they were read (a reader down longer than max_age) as truncated', () => {
    expect(streamVerdict({ seq: 40, stream: stream.created }, { ...stream, first_seq: 60 })).toMatchObject({ reason: 'truncated' });
  });

  it('names a checkpoint marked by restore-reconcile as restored, and reads on from the end of the stream', () => {
    const reset = streamVerdict({ seq: 40, stream: RESTORED_STREAM }, stream);
    expect(reset).toMatchObject({ reason: 'restored' });
    expect(anchorAfter(reset as never)).toBe(100);
    expect(gapOf(reset as never, new Set())).toBeUndefined();
  });
});

describe('stream gap', () => {
  const state = { created: 'new', first_seq: 1, last_seq: 10 };

  it('counts the old stream’s sequences after the checkpoint that no outbox row was stored at', () => {
    const reset = { reason: 'replaced' as const, previous: { seq: 40, stream: 'old' }, state, lastSeen: 50 };
    expect(gapOf(reset, new Set([41, 42, 43, 44, 45, 46, 47, 48, 49, 50]))).toBeUndefined();
    expect(gapOf(reset, new Set([41, 42, 45, 46, 47, 48, 49, 50]))).toEqual({ from_seq: 41, to_seq: 50, missing: 2 });
    // Rows stored past the last sequence seen extend the range; rows at or below the checkpoint do not count.
    expect(gapOf({ ...reset, lastSeen: undefined }, new Set([30, 41, 43]))).toEqual({ from_seq: 41, to_seq: 43, missing: 1 });
    expect(anchorAfter(reset)).toBe(0);
  });

  it('for a truncated stream, the sequences before its first', () => {
    const reset = { reason: 'truncated' as const, previous: { seq: 40, stream: 'same' }, state: { created: 'same', first_seq: 46, last_seq: 90 } };
    expect(gapOf(reset, new Set([41, 42, 43]))).toEqual({ from_seq: 41, to_seq: 45, missing: 2 });
    expect(gapOf(reset, new Set([41, 42, 43, 44, 45]))).toBeUndefined();
    expect(anchorAfter(reset)).toBe(45);
  });
});
