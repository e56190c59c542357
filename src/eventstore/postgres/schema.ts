import type { Migration } from '../../db/migrations';

/**
 * The event log. Global order is (tx_id, position): `position` comes from a sequence and is
 * assigned before commit, so a later position can become visible before an earlier one. Readers
 * therefore only read rows whose transaction is older than the oldest transaction still running
 * (pg_snapshot_xmin): such rows can no longer be joined by a concurrent commit, so the reader may
 * pause behind a long transaction but never skips an event.
 */
export const eventStoreMigrations: readonly Migration[] = [
  {
    version: 1,
    name: 'event store',
    sql: `
      CREATE TABLE es_streams (
        stream_id text PRIMARY KEY,
        revision bigint NOT NULL
      );
      CREATE TABLE es_events (
        position bigserial PRIMARY KEY,
        tx_id xid8 NOT NULL DEFAULT pg_current_xact_id(),
        stream_id text NOT NULL,
        revision bigint NOT NULL,
        event_id uuid NOT NULL UNIQUE,
        type text NOT NULL,
        data jsonb NOT NULL,
        metadata jsonb NOT NULL DEFAULT '{}',
        recorded_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        UNIQUE (stream_id, revision)
      );
      CREATE INDEX es_events_global_order ON es_events (tx_id, position);

      -- One round trip per append: lock the stream, check the expected revision, insert the batch,
      -- notify subscribers (delivered at commit). Returns ok=false with the actual revision on a
      -- conflict instead of raising, so the caller can build a typed error.
      --
      -- The stream is first locked with an advisory lock, which does not assign a transaction id.
      -- The id is assigned by the first write after it, so appenders of one stream get ids in the
      -- order they hold the lock, and the global order (tx_id, position) keeps every stream's
      -- revision order. This needs es_append to be the first write of its transaction.
      CREATE FUNCTION es_append(
        p_stream text, p_expected_kind text, p_expected bigint,
        p_ids uuid[], p_types text[], p_data jsonb[], p_metadata jsonb[]
      ) RETURNS TABLE (ok boolean, revision bigint, tx_id xid8, last_position bigint)
      LANGUAGE plpgsql AS $$
      DECLARE
        cur bigint;
        n integer := cardinality(p_ids);
        last_pos bigint;
      BEGIN
        PERFORM pg_advisory_xact_lock(hashtextextended(p_stream, 0));
        LOOP
          SELECT s.revision INTO cur FROM es_streams s WHERE s.stream_id = p_stream FOR UPDATE;
          EXIT WHEN FOUND;
          -- A concurrent creator makes this insert a no-op; the next SELECT then waits on its row.
          INSERT INTO es_streams (stream_id, revision) VALUES (p_stream, -1) ON CONFLICT DO NOTHING;
        END LOOP;
        IF (p_expected_kind = 'no_stream' AND cur <> -1)
           OR (p_expected_kind = 'stream_exists' AND cur = -1)
           OR (p_expected_kind = 'exact' AND cur <> p_expected) THEN
          RETURN QUERY SELECT false, cur, NULL::xid8, NULL::bigint;
          RETURN;
        END IF;
        WITH inserted AS (
          INSERT INTO es_events (stream_id, revision, event_id, type, data, metadata)
            SELECT p_stream, cur + e.ord, e.id, e.type, e.data, e.metadata
            FROM unnest(p_ids, p_types, p_data, p_metadata) WITH ORDINALITY AS e(id, type, data, metadata, ord)
            ORDER BY e.ord
            RETURNING es_events.position
        ) SELECT max(inserted.position) INTO last_pos FROM inserted;
        UPDATE es_streams SET revision = cur + n WHERE stream_id = p_stream;
        PERFORM pg_notify('es_appended', '');
        RETURN QUERY SELECT true, cur + n, pg_current_xact_id(), last_pos;
      END $$;

      CREATE TABLE es_snapshots (
        stream_id text PRIMARY KEY,
        revision bigint NOT NULL,
        schema_version integer NOT NULL,
        state jsonb NOT NULL
      );
    `,
  },
  {
    version: 2,
    name: 'cross-stream appends',
    sql: `
      -- Group commit: the appends of many streams in one transaction (one durable commit), each
      -- with its own expected-revision check. A stream whose check fails gets ok=false and nothing
      -- appended; the others commit. Entries of one stream are applied in the order given.
      --
      -- Every stream's advisory lock is taken before the first write, in one order (the lock key),
      -- so two batches cannot deadlock and the transaction id (assigned by the first write) still
      -- comes after every lock is held: the global order keeps every stream's revision order, as
      -- with es_append. Events of entry i are p_counts[i] consecutive elements of the event arrays.
      CREATE FUNCTION es_append_batch(
        p_streams text[], p_expected_kinds text[], p_expected bigint[], p_counts integer[],
        p_ids uuid[], p_types text[], p_data jsonb[], p_metadata jsonb[]
      ) RETURNS TABLE (entry integer, ok boolean, revision bigint, tx_id xid8, last_position bigint)
      LANGUAGE plpgsql AS $$
      DECLARE
        lock_key bigint;
        i integer;
        cur bigint;
        n integer;
        first integer := 1;
        last_pos bigint;
        appended boolean := false;
      BEGIN
        FOR lock_key IN SELECT DISTINCT hashtextextended(s.stream, 0) AS k FROM unnest(p_streams) AS s(stream) ORDER BY k LOOP
          PERFORM pg_advisory_xact_lock(lock_key);
        END LOOP;
        FOR i IN 1 .. cardinality(p_streams) LOOP
          n := p_counts[i];
          LOOP
            SELECT s.revision INTO cur FROM es_streams s WHERE s.stream_id = p_streams[i] FOR UPDATE;
            EXIT WHEN FOUND;
            INSERT INTO es_streams (stream_id, revision) VALUES (p_streams[i], -1) ON CONFLICT DO NOTHING;
          END LOOP;
          IF (p_expected_kinds[i] = 'no_stream' AND cur <> -1)
             OR (p_expected_kinds[i] = 'stream_exists' AND cur = -1)
             OR (p_expected_kinds[i] = 'exact' AND cur <> p_expected[i]) THEN
            RETURN QUERY SELECT i, false, cur, NULL::xid8, NULL::bigint;
          ELSE
            WITH inserted AS (
              INSERT INTO es_events (stream_id, revision, event_id, type, data, metadata)
                SELECT p_streams[i], cur + e.ord, e.id, e.type, e.data, e.metadata
                FROM unnest(p_ids[first : first + n - 1], p_types[first : first + n - 1],
                            p_data[first : first + n - 1], p_metadata[first : first + n - 1])
                     WITH ORDINALITY AS e(id, type, data, metadata, ord)
                ORDER BY e.ord
                RETURNING es_events.position
            ) SELECT max(inserted.position) INTO last_pos FROM inserted;
            UPDATE es_streams SET revision = cur + n WHERE stream_id = p_streams[i];
            appended := true;
            RETURN QUERY SELECT i, true, cur + n, pg_current_xact_id(), last_pos;
          END IF;
          first := first + n;
        END LOOP;
        IF appended THEN
          PERFORM pg_notify('es_appended', '');
        END IF;
      END $$;
    `,
  },
  {
    version: 3,
    name: 'appends that leave the notification to a later one',
    sql: `
      -- es_append and es_append_batch with p_notify: false leaves the es_appended notification to
      -- a later one the caller sends (a process notifies at most once per subscription window; see
      -- PostgresEventStore). The two-argument-shorter forms stay, for gateways of the previous
      -- shape during a rolling upgrade, and now call these with p_notify true: one body each.
      CREATE FUNCTION es_append(
        p_stream text, p_expected_kind text, p_expected bigint,
        p_ids uuid[], p_types text[], p_data jsonb[], p_metadata jsonb[], p_notify boolean
      ) RETURNS TABLE (ok boolean, revision bigint, tx_id xid8, last_position bigint)
      LANGUAGE plpgsql AS $$
      DECLARE
        cur bigint;
        n integer := cardinality(p_ids);
        last_pos bigint;
      BEGIN
        PERFORM pg_advisory_xact_lock(hashtextextended(p_stream, 0));
        LOOP
          SELECT s.revision INTO cur FROM es_streams s WHERE s.stream_id = p_stream FOR UPDATE;
          EXIT WHEN FOUND;
          INSERT INTO es_streams (stream_id, revision) VALUES (p_stream, -1) ON CONFLICT DO NOTHING;
        END LOOP;
        IF (p_expected_kind = 'no_stream' AND cur <> -1)
           OR (p_expected_kind = 'stream_exists' AND cur = -1)
           OR (p_expected_kind = 'exact' AND cur <> p_expected) THEN
          RETURN QUERY SELECT false, cur, NULL::xid8, NULL::bigint;
          RETURN;
        END IF;
        WITH inserted AS (
          INSERT INTO es_events (stream_id, revision, event_id, type, data, metadata)
            SELECT p_stream, cur + e.ord, e.id, e.type, e.data, e.metadata
            FROM unnest(p_ids, p_types, p_data, p_metadata) WITH ORDINALITY AS e(id, type, data, metadata, ord)
            ORDER BY e.ord
            RETURNING es_events.position
        ) SELECT max(inserted.position) INTO last_pos FROM inserted;
        UPDATE es_streams SET revision = cur + n WHERE stream_id = p_stream;
        IF p_notify THEN
          PERFORM pg_notify('es_appended', '');
        END IF;
        RETURN QUERY SELECT true, cur + n, pg_current_xact_id(), last_pos;
      END $$;

      CREATE OR REPLACE FUNCTION es_append(
        p_stream text, p_expected_kind text, p_expected bigint,
        p_ids uuid[], p_types text[], p_data jsonb[], p_metadata jsonb[]
      ) RETURNS TABLE (ok boolean, revision bigint, tx_id xid8, last_position bigint)
      LANGUAGE sql AS $$
        SELECT * FROM es_append(p_stream, p_expected_kind, p_expected, p_ids, p_types, p_data, p_metadata, true)
      $$;

      CREATE FUNCTION es_append_batch(
        p_streams text[], p_expected_kinds text[], p_expected bigint[], p_counts integer[],
        p_ids uuid[], p_types text[], p_data jsonb[], p_metadata jsonb[], p_notify boolean
      ) RETURNS TABLE (entry integer, ok boolean, revision bigint, tx_id xid8, last_position bigint)
      LANGUAGE plpgsql AS $$
      DECLARE
        lock_key bigint;
        i integer;
        cur bigint;
        n integer;
        first integer := 1;
        last_pos bigint;
        appended boolean := false;
      BEGIN
        FOR lock_key IN SELECT DISTINCT hashtextextended(s.stream, 0) AS k FROM unnest(p_streams) AS s(stream) ORDER BY k LOOP
          PERFORM pg_advisory_xact_lock(lock_key);
        END LOOP;
        FOR i IN 1 .. cardinality(p_streams) LOOP
          n := p_counts[i];
          LOOP
            SELECT s.revision INTO cur FROM es_streams s WHERE s.stream_id = p_streams[i] FOR UPDATE;
            EXIT WHEN FOUND;
            INSERT INTO es_streams (stream_id, revision) VALUES (p_streams[i], -1) ON CONFLICT DO NOTHING;
          END LOOP;
          IF (p_expected_kinds[i] = 'no_stream' AND cur <> -1)
             OR (p_expected_kinds[i] = 'stream_exists' AND cur = -1)
             OR (p_expected_kinds[i] = 'exact' AND cur <> p_expected[i]) THEN
            RETURN QUERY SELECT i, false, cur, NULL::xid8, NULL::bigint;
          ELSE
            WITH inserted AS (
              INSERT INTO es_events (stream_id, revision, event_id, type, data, metadata)
                SELECT p_streams[i], cur + e.ord, e.id, e.type, e.data, e.metadata
                FROM unnest(p_ids[first : first + n - 1], p_types[first : first + n - 1],
                            p_data[first : first + n - 1], p_metadata[first : first + n - 1])
                     WITH ORDINALITY AS e(id, type, data, metadata, ord)
                ORDER BY e.ord
                RETURNING es_events.position
            ) SELECT max(inserted.position) INTO last_pos FROM inserted;
            UPDATE es_streams SET revision = cur + n WHERE stream_id = p_streams[i];
            appended := true;
            RETURN QUERY SELECT i, true, cur + n, pg_current_xact_id(), last_pos;
          END IF;
          first := first + n;
        END LOOP;
        IF appended AND p_notify THEN
          PERFORM pg_notify('es_appended', '');
        END IF;
      END $$;

      CREATE OR REPLACE FUNCTION es_append_batch(
        p_streams text[], p_expected_kinds text[], p_expected bigint[], p_counts integer[],
        p_ids uuid[], p_types text[], p_data jsonb[], p_metadata jsonb[]
      ) RETURNS TABLE (entry integer, ok boolean, revision bigint, tx_id xid8, last_position bigint)
      LANGUAGE sql AS $$
        SELECT * FROM es_append_batch(p_streams, p_expected_kinds, p_expected, p_counts, p_ids, p_types, p_data, p_metadata, true)
      $$;
    `,
  },
];
