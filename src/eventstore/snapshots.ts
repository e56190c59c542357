/**
 * The snapshot port: the last saved state of a stream's aggregate, so that loading a long stream
 * reads the snapshot and the events after it instead of the whole stream. A snapshot is a cache of
 * a fold of the log, never a source of truth: losing one, or failing to save one, costs a longer
 * read and nothing else. Implementations: PostgresSnapshotStore (the table es_snapshots), used with
 * either event store (the gateway always has its PostgreSQL for read models).
 */
export interface Snapshot<State> {
  /** The revision of the stream's last event folded into `state`. */
  readonly revision: number;
  readonly state: State;
}

export interface SnapshotStore {
  /**
   * The stream's snapshot taken with this `schemaVersion` of the state (see Decider.snapshotVersion),
   * or null: a snapshot of another version is of another state shape and is never returned.
   */
  load<State>(streamId: string, schemaVersion: number): Promise<Snapshot<State> | null>;
  /**
   * Keeps `snapshot` as the stream's snapshot unless the stored one, of the same schema version,
   * is at a later revision (two processes may save out of order; the newer state wins).
   */
  save<State>(streamId: string, schemaVersion: number, snapshot: Snapshot<State>): Promise<void>;
}
