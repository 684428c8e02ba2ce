package io.lockstep.faults;

/**
 * The recipe and mode a worker process runs: every recipe of the library, and the modes of the
 * mutex that change how a process holds its place in the queue.
 */
enum RoleKind {
  /** {@code ReentrantMutex}, one node per acquire. */
  MUTEX("ReentrantMutex"),
  /**
   * {@code ReentrantMutex.builder(client, path).localHandoff(n)}: the process's threads share a
   * node.
   */
  LOCAL_HANDOFF("ReentrantMutex, local handoff"),
  /** {@code ReentrantMutex.builder(client, path).linger(d)}: the place is kept after a release. */
  LINGER("ReentrantMutex, linger"),
  /** {@code NonReentrantMutex}. */
  NON_REENTRANT("NonReentrantMutex"),
  /** {@code ReadWriteMutex}: even threads take the write lock, odd threads the read lock. */
  READ_WRITE("ReadWriteMutex, write and read"),
  /** {@code MultiMutex} over the worker's parts (a mutex or one side of a read-write lock each). */
  MULTI("MultiMutex"),
  /** {@code CountingSemaphore}: each thread takes one lease at a time. */
  SEMAPHORE("CountingSemaphore"),
  /** {@code LeaderElection}: one participant per process, which steps down now and then. */
  ELECTION("LeaderElection");

  private final String label;

  RoleKind(String label) {
    this.label = label;
  }

  /** The recipe and mode, as the report names them. */
  String label() {
    return label;
  }

  /** Whether the role's threads take lock objects (rather than leases or leaderships). */
  boolean isLock() {
    return this != SEMAPHORE && this != ELECTION;
  }
}
