package io.lockstep.faults;

/**
 * Where a hold writes for one of its lock paths: the fenced store's resource and the ZooKeeper data
 * node. An exclusive hold writes the resource of its lock path, which every holder of that path
 * shares; a shared hold (a read lock, a lease) writes a resource of its own thread's, since shared
 * holders hold side by side and their tokens are not ordered among themselves.
 *
 * @param lockPath the real lock path
 * @param resource the store's key
 * @param dataNode the real path of the data node
 * @param shared whether the hold is shared
 */
record WriteTarget(String lockPath, String resource, String dataNode, boolean shared) {
  /** The target of an exclusive hold of the lock {@code name}. */
  static WriteTarget exclusive(WorkerSpec spec, String name) {
    return new WriteTarget(
        spec.realLockPath(name), spec.realLockPath(name), spec.realDataPath(name), false);
  }

  /** The target of a shared hold of the lock {@code name} by {@code thread} of the worker. */
  static WriteTarget shared(WorkerSpec spec, String name, String thread) {
    String owner = spec.worker() + "." + thread;
    return new WriteTarget(
        spec.realLockPath(name),
        spec.realLockPath(name) + "#" + owner,
        spec.realDataPath(name + "-" + spec.worker() + "-" + thread),
        true);
  }
}
