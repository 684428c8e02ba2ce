package io.lockstep.recipes.locks;

import io.lockstep.recipes.internal.engine.AttemptFactory;
import io.lockstep.recipes.internal.engine.LockSettings;
import io.lockstep.recipes.internal.queue.Slot;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Function;
import org.apache.curator.framework.CuratorFramework;

/**
 * The builders of {@link ReentrantMutex} and {@link NonReentrantMutex}: the options they share (the
 * queue order and local handoff), and what the lock is made of, its queue and its attempts; each
 * builder gives the name and the constructor of its recipe. Javadoc documents its public methods as
 * each builder's own.
 *
 * @param <B> the builder, which every option returns
 * @param <L> the lock it builds
 */
abstract class MutexBuilder<B extends MutexBuilder<B, L>, L> extends RecipeBuilder {
  private final String kind; // the recipe's name, for its settings and its toString
  private final Function<B, L> make;
  private LockDriver driver = LockDriver.mutex();
  private int localHandoffs;
  private long lingerNanos;

  MutexBuilder(CuratorFramework client, String path, String kind, Function<B, L> make) {
    super(client, path);
    this.kind = kind;
    this.make = make;
  }

  /**
   * Orders the queue with {@code driver} instead of Curator's mutex order.
   *
   * @param driver the queue order; every participant of the path must agree with it
   * @return this builder
   * @throws NullPointerException if {@code driver} is null
   */
  public B driver(LockDriver driver) {
    this.driver = Objects.requireNonNull(driver, "driver");
    return self();
  }

  /**
   * Hands the lock from holder to holder inside this process (cohort locking), with the default
   * bound of {@value LocalHandoff#DEFAULT_MAX_IN_A_ROW} handoffs in a row; see {@link
   * #localHandoff(int)}.
   *
   * @return this builder
   */
  public B localHandoff() {
    return localHandoff(LocalHandoff.DEFAULT_MAX_IN_A_ROW);
  }

  /**
   * Hands the lock from holder to holder inside this process (cohort locking). Every lock object of
   * this client on this path built this way shares one place in the queue: one node for the
   * process. Its local contenders (threads, handles, asynchronous waiters) take turns in memory, in
   * arrival order, and the lock goes back through ZooKeeper only when no local contender waits, or
   * after {@code maxInARow} local handoffs in a row while another participant may wait, so no other
   * process starves. This changes Curator's strict queue order, hence the opt-in; see {@link
   * LocalHandoff} for what it costs and what stays the same. A {@link ReentrantMutex} that hands
   * off locally cannot be made revocable.
   *
   * @param maxInARow the most local handoffs in a row while others may wait; at least 1
   * @return this builder
   * @throws IllegalArgumentException if {@code maxInARow} is less than 1
   */
  public B localHandoff(int maxInARow) {
    this.localHandoffs = Arguments.atLeastOne(maxInARow, "maxInARow");
    return self();
  }

  /**
   * Keeps the process's place in the queue for up to {@code linger} after the last local release,
   * while no other participant queues (lock caching): an acquire in that time holds at once, in
   * memory, with no request. The place goes back as soon as another participant queues (when no
   * local contender holds; else at the release), and when the linger runs out. Implies {@link
   * #localHandoff()} unless a bound was set; see {@link LocalHandoff} for when it pays and what it
   * costs other processes.
   *
   * @param linger how long the place is kept; positive, at most {@link LocalHandoff#MAX_LINGER}
   * @return this builder
   * @throws NullPointerException if {@code linger} is null
   * @throws IllegalArgumentException if {@code linger} is not positive or exceeds the maximum
   */
  public B linger(Duration linger) {
    this.lingerNanos = LocalHandoff.checkLinger(linger);
    return self();
  }

  /**
   * Checks the options and makes the lock. Nothing is sent to ZooKeeper until the first acquire.
   *
   * @return the lock
   * @throws IllegalArgumentException if the driver's lock name cannot be part of a node name
   */
  public L build() {
    return make.apply(self());
  }

  @SuppressWarnings("unchecked") // B is the class of every builder that extends this one
  private B self() {
    return (B) this;
  }

  /** Whether the lock hands off locally: asked for, or implied by a linger. */
  boolean handsOffLocally() {
    return localHandoffs > 0 || lingerNanos > 0;
  }

  /**
   * The lock's queue.
   *
   * @throws IllegalArgumentException if the driver's lock name cannot be part of a node name
   */
  Slot slot() {
    Arguments.lockName(driver.lockName());
    return Slot.of(path, driver, null);
  }

  /**
   * The attempts of the lock on {@code slot}: on a place shared by the process's local contenders
   * if it hands off locally, else plain ones.
   */
  AttemptFactory attempts(Slot slot) {
    return LocalHandoff.attempts(
        LockSettings.of(client, path, kind), slot, localHandoffs, lingerNanos);
  }

  /** The lock's queue, every node of which takes part. */
  QueueView queues(Slot slot) {
    return QueueView.of(kind, slot.alone());
  }
}
