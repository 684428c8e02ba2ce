package io.lockstep.recipes.locks;

import io.lockstep.recipes.internal.owner.Leases;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The acquire forms {@link CountingSemaphore} keeps from Curator's {@code InterProcessSemaphoreV2},
 * with their shapes and meanings (a timed one returns {@code null} when the budget runs out), and
 * its list of participant nodes, over the semaphore's {@link Leases}; the forms every recipe shares
 * are the semaphore's own. Javadoc documents its public methods as {@link CountingSemaphore}'s.
 */
abstract class CuratorSemaphoreForms {
  final Leases leases;
  final int maxLeases;

  CuratorSemaphoreForms(CountingSemaphore.Builder options) {
    this.leases = new Leases(options.client, options.path, options.maxLeases, "CountingSemaphore");
    this.maxLeases = options.maxLeases;
  }

  /**
   * Waits as long as it takes for a lease, as Curator's {@code acquire()}.
   *
   * @return the lease; close it to give it back
   * @throws InterruptedException if interrupted first (nothing is left behind)
   * @throws IllegalStateException if the semaphore object was closed
   * @throws LockException if ZooKeeper failed beyond the client's retry policy, or the client
   *     closed
   */
  public LockHold acquire() throws InterruptedException {
    return leases.acquire(1, -1).get(0);
  }

  /**
   * Waits at most {@code time} for a lease, as Curator's {@code acquire(long, TimeUnit)}.
   *
   * @param time the budget, in {@code unit}
   * @param unit the unit of {@code time}
   * @return the lease, or {@code null} if none was free within the budget (Curator's meaning; see
   *     {@link CountingSemaphore#tryHold(Duration)} for an {@link java.util.Optional})
   * @throws NullPointerException if {@code unit} is null
   * @throws IllegalArgumentException if {@code time} is negative
   * @throws InterruptedException if interrupted first (nothing is left behind)
   * @throws IllegalStateException if the semaphore object was closed
   * @throws LockUnreachableException if ZooKeeper could not be reached when the budget ran out
   * @throws LockException if ZooKeeper failed beyond the client's retry policy, or the client
   *     closed
   */
  public LockHold acquire(long time, TimeUnit unit) throws InterruptedException {
    return firstOrNull(leases.acquire(1, Arguments.timeoutNanos(time, unit)));
  }

  /**
   * Waits at most {@code timeout} for a lease: {@link #acquire(long, TimeUnit)} with a {@link
   * Duration}.
   *
   * @param timeout the budget
   * @return the lease, or {@code null} if none was free within the budget
   * @throws NullPointerException if {@code timeout} is null
   * @throws IllegalArgumentException if {@code timeout} is negative
   * @throws InterruptedException if interrupted first (nothing is left behind)
   * @throws IllegalStateException if the semaphore object was closed
   * @throws LockUnreachableException if ZooKeeper could not be reached when the budget ran out
   * @throws LockException if ZooKeeper failed beyond the client's retry policy, or the client
   *     closed
   */
  public LockHold acquire(Duration timeout) throws InterruptedException {
    return firstOrNull(leases.acquire(1, Arguments.timeoutNanos(timeout, "timeout")));
  }

  /**
   * Waits as long as it takes for {@code qty} leases, as Curator's {@code acquire(int)}; see {@link
   * CountingSemaphore#tryHold(int, Duration)} for how several leases are taken.
   *
   * @param qty how many leases, from 1 to {@code maxLeases}
   * @return {@code qty} leases
   * @throws IllegalArgumentException if {@code qty} is out of range
   * @throws InterruptedException if interrupted first (nothing is left behind)
   * @throws IllegalStateException if the semaphore object was closed
   * @throws LockException if ZooKeeper failed beyond the client's retry policy, or the client
   *     closed
   */
  public List<LockHold> acquire(int qty) throws InterruptedException {
    return leases.acquire(checkQty(qty), -1);
  }

  /**
   * Waits at most {@code time} for {@code qty} leases, all or none, as Curator's {@code
   * acquire(int, long, TimeUnit)}; see {@link CountingSemaphore#tryHold(int, Duration)}.
   *
   * @param qty how many leases, from 1 to {@code maxLeases}
   * @param time the budget, in {@code unit}
   * @param unit the unit of {@code time}
   * @return {@code qty} leases, or {@code null} if the budget ran out (Curator's meaning; every
   *     lease granted by then was given back)
   * @throws NullPointerException if {@code unit} is null
   * @throws IllegalArgumentException if {@code qty} is out of range or {@code time} negative
   * @throws InterruptedException if interrupted first (nothing is left behind)
   * @throws IllegalStateException if the semaphore object was closed
   * @throws LockUnreachableException if ZooKeeper could not be reached when the budget ran out
   * @throws LockException if ZooKeeper failed beyond the client's retry policy, or the client
   *     closed
   */
  public List<LockHold> acquire(int qty, long time, TimeUnit unit) throws InterruptedException {
    return emptyToNull(leases.acquire(checkQty(qty), Arguments.timeoutNanos(time, unit)));
  }

  /**
   * Waits at most {@code timeout} for {@code qty} leases, all or none: {@link #acquire(int, long,
   * TimeUnit)} with a {@link Duration}.
   *
   * @param qty how many leases, from 1 to {@code maxLeases}
   * @param timeout the budget
   * @return {@code qty} leases, or {@code null} if the budget ran out (every lease granted by then
   *     was given back); {@link CountingSemaphore#tryHold(int, Duration)} returns an empty list
   *     instead
   * @throws NullPointerException if {@code timeout} is null
   * @throws IllegalArgumentException if {@code qty} is out of range or {@code timeout} negative
   * @throws InterruptedException if interrupted first (nothing is left behind)
   * @throws IllegalStateException if the semaphore object was closed
   * @throws LockUnreachableException if ZooKeeper could not be reached when the budget ran out
   * @throws LockException if ZooKeeper failed beyond the client's retry policy, or the client
   *     closed
   */
  public List<LockHold> acquire(int qty, Duration timeout) throws InterruptedException {
    return emptyToNull(leases.acquire(checkQty(qty), Arguments.timeoutNanos(timeout, "timeout")));
  }

  /**
   * The names of the lease nodes, read from the server, as Curator's {@code getParticipantNodes}.
   *
   * @return the node names, in no particular order
   * @throws LockException if ZooKeeper could not be read
   */
  public List<String> getParticipantNodes() {
    return leases.participantNodes();
  }

  /** Returns {@code qty}, or throws if it is not from 1 to {@code maxLeases}. */
  int checkQty(int qty) {
    if (qty < 1 || qty > maxLeases) {
      throw new IllegalArgumentException(
          "qty must be from 1 to maxLeases (" + maxLeases + "): " + qty);
    }
    return qty;
  }

  private static LockHold firstOrNull(List<LockHold> got) {
    return got.isEmpty() ? null : got.get(0);
  }

  private static List<LockHold> emptyToNull(List<LockHold> got) {
    return got.isEmpty() ? null : got;
  }
}
