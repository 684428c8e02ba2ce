package io.lockstep.faults;

/** The faults the suite injects. */
enum FaultKind {
  /** {@code kill -STOP} of a worker that holds a lock, then {@code kill -CONT}. */
  FREEZE_HOLDER("holder frozen", true),
  /** {@code kill -STOP} of the worker whose node waits right behind the holder's. */
  FREEZE_WAITER("waiter behind the holder frozen", true),
  /** {@code kill -STOP} of a worker that lingers: released, its place kept. */
  FREEZE_LINGERER("lingering process frozen", true),
  /** {@code kill -STOP} of the election's leader. */
  FREEZE_LEADER("election leader frozen", true),
  /** {@code kill -9} of a worker that holds a lock; a fresh worker takes its place. */
  KILL_HOLDER("holder killed", true),
  /** The client of a holder expires its session on its own; the server keeps it until timeout. */
  CLIENT_EXPIRY("session expired on the client", true),
  /** {@code kill -STOP} of the one server (hung, not dead), then {@code kill -CONT}. */
  FREEZE_SERVER("server frozen", false),
  /** {@code kill -STOP} of the leader of a three-server ensemble, then {@code kill -CONT}. */
  FREEZE_ENSEMBLE_LEADER("ensemble leader frozen", false),
  /** {@code kill -9} of the one server and a restart on its data, clients on RetryForever. */
  SERVER_RESTART("server restarted", false);

  private final String label;
  private final boolean process;

  FaultKind(String label, boolean process) {
    this.label = label;
    this.process = process;
  }

  /** How the report names it. */
  String label() {
    return label;
  }

  /** Whether it hits a worker process rather than the servers. */
  boolean process() {
    return process;
  }
}
