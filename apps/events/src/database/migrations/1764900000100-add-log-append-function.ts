import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Appending a batch from the stream to the log as one function call: one round trip to PostgreSQL
 * instead of eight (begin, lock, checkpoint, known ids, positions, insert, checkpoint, commit).
 *
 * event_log_append takes the writer lock (`p_lock`, the transaction advisory lock the log's other
 * writers take too) until its commit, so positions are drawn and become visible in the same order. Of
 * the batch it appends, in the order given, the events after the checkpoint whose id the log does not
 * hold yet (a relay may publish an event twice, past the stream's duplicate window), the first of each
 * id once, and moves the checkpoint to the batch's last stream sequence. Answers how many it appended.
 */
export class AddLogAppendFunction1764900000100 implements MigrationInterface {
  name = 'AddLogAppendFunction1764900000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION event_log_append(p_lock text, p_seqs bigint[], p_ids text[], p_types text[], p_occurred_at timestamptz[],
                                       p_actors jsonb[], p_vias text[], p_request_ids text[], p_data jsonb[])
      RETURNS integer LANGUAGE plpgsql AS $fn$
      DECLARE
        written_through bigint;
        last_seq bigint;
        fresh integer[];
        positions bigint[];
      BEGIN
        PERFORM pg_advisory_xact_lock(hashtext(p_lock));
        SELECT stream_seq INTO written_through FROM log_checkpoint;
        SELECT max(s) INTO last_seq FROM unnest(p_seqs) AS s;
        IF last_seq IS NULL OR last_seq <= written_through THEN
          RETURN 0;
        END IF;
        SELECT array_agg(first.n ORDER BY first.n) INTO fresh
        FROM (SELECT DISTINCT ON (e.id) e.id, e.n::integer AS n
              FROM unnest(p_seqs, p_ids) WITH ORDINALITY AS e(seq, id, n)
              WHERE e.seq > written_through
              ORDER BY e.id, e.n) AS first
        WHERE NOT EXISTS (SELECT 1 FROM events logged WHERE logged.id = first.id);
        IF fresh IS NOT NULL THEN
          SELECT array_agg(drawn.p ORDER BY drawn.p) INTO positions
          FROM (SELECT nextval('event_position') AS p FROM generate_series(1, cardinality(fresh))) AS drawn;
          INSERT INTO events (position, id, type, occurred_at, actor, via, request_id, data)
          SELECT positions[f.k], p_ids[f.n], p_types[f.n], p_occurred_at[f.n], p_actors[f.n], p_vias[f.n], p_request_ids[f.n], p_data[f.n]
          FROM unnest(fresh) WITH ORDINALITY AS f(n, k);
        END IF;
        UPDATE log_checkpoint SET stream_seq = last_seq;
        RETURN coalesce(cardinality(fresh), 0);
      END
      $fn$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION event_log_append(text, bigint[], text[], text[], timestamptz[], jsonb[], text[], text[], jsonb[])`);
  }
}
