package io.lockstep.recipes.micrometer;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.lockstep.recipes.locks.AcquireOutcome;
import io.lockstep.recipes.locks.LockAttempt;
import io.lockstep.recipes.locks.LockObserver;
import io.lockstep.recipes.locks.LockObservers;
import io.lockstep.recipes.locks.LockState;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.curator.framework.CuratorFramework;

/**
 * Micrometer meters of every lock made with one Curator client: how long acquires wait and how they
 * end, how long locks are held, how many attempts wait and how many holds are held right now, and
 * how often holds are put at risk or lost.
 *
 * <pre>{@code
 * import io.lockstep.recipes.micrometer.LockstepMetrics;
 * import io.micrometer.core.instrument.MeterRegistry;
 * import org.apache.curator.framework.CuratorFramework;
 *
 * CuratorFramework client = ...; // a started client
 * MeterRegistry meterRegistry = ...; // your application's registry
 * new LockstepMetrics(client).bindTo(meterRegistry);
 * }</pre>
 *
 * <p><b>Meters.</b> Every lock of the client, its namespace facades included, from construction on:
 *
 * <table>
 *   <caption>The meters</caption>
 *   <tr><th>Name</th><th>Type</th><th>Tags</th><th>Measures</th></tr>
 *   <tr><td>{@value #ACQUIRE}</td><td>timer (seconds)</td><td>{@code recipe}, {@code outcome}</td>
 *       <td>each attempt to acquire, from its start to its end: the time waited</td></tr>
 *   <tr><td>{@value #HELD}</td><td>timer (seconds)</td><td>{@code recipe}</td>
 *       <td>each hold, from the grant to the release (a hold lost meanwhile included)</td></tr>
 *   <tr><td>{@value #WAITERS}</td><td>gauge</td><td>none</td>
 *       <td>attempts under way now</td></tr>
 *   <tr><td>{@value #HOLDERS}</td><td>gauge</td><td>none</td>
 *       <td>holds granted and neither released nor lost, now</td></tr>
 *   <tr><td>{@value #AT_RISK}</td><td>counter</td><td>{@code recipe}</td>
 *       <td>holds put at risk (connection suspended while held)</td></tr>
 *   <tr><td>{@value #LOST}</td><td>counter</td><td>{@code recipe}</td>
 *       <td>holds lost (session expired, node deleted, client closed)</td></tr>
 * </table>
 *
 * <p>{@code recipe} is {@code ReentrantMutex}, {@code NonReentrantMutex}, {@code
 * ReadWriteMutex.ReadLock}, {@code ReadWriteMutex.WriteLock} or {@code MultiMutex}; {@code outcome}
 * is an {@link AcquireOutcome}: {@code GRANTED}, {@code TIMED_OUT}, {@code WITHDRAWN} (interrupted
 * or cancelled), {@code UNREACHABLE} or {@code FAILED}. A reentrant acquire is no attempt and is
 * not measured.
 *
 * <p><b>Paths.</b> No meter is tagged by lock path by default: a service that locks per order or
 * per tenant has unbounded paths, and a meter per path would grow without end. To tell a few
 * important locks apart, name them with {@link Builder#tagPaths(Set)}: every meter then has a
 * {@code path} tag, the lock's path for those (a multi-lock's is its paths in brackets, {@code [/a,
 * /b]}) and {@value #OTHER_PATHS} for all others, and the gauges are kept per path.
 *
 * <p><b>Threads and failures.</b> The meters are updated by a {@link LockObserver} registered with
 * {@link LockObservers#of(CuratorFramework)}: in the acquiring thread when an attempt starts, else
 * on Lockstep's threads, never on ZooKeeper's event thread. A failing registry is logged by the
 * observer point and costs the lock nothing. Binding to several registries records in each.
 *
 * <p><b>Limits.</b> The meters cover one client: bind one {@code LockstepMetrics} per client, and
 * tell clients apart with {@link Builder#tags(Iterable)} when several report to one registry (two
 * gauges with the same name and tags count as one). {@link #close()} stops observing the client.
 */
public final class LockstepMetrics implements MeterBinder, AutoCloseable {
  /** The timer of attempts to acquire: {@value}. */
  public static final String ACQUIRE = "lockstep.lock.acquire";

  /** The timer of holds: {@value}. */
  public static final String HELD = "lockstep.lock.held";

  /** The gauge of attempts under way: {@value}. */
  public static final String WAITERS = "lockstep.lock.waiters";

  /** The gauge of holds held: {@value}. */
  public static final String HOLDERS = "lockstep.lock.holders";

  /** The counter of holds put at risk: {@value}. */
  public static final String AT_RISK = "lockstep.lock.at.risk";

  /** The counter of holds lost: {@value}. */
  public static final String LOST = "lockstep.lock.lost";

  /** The {@code path} tag of the locks not named in {@link Builder#tagPaths(Set)}: {@value}. */
  public static final String OTHER_PATHS = "other";

  private final CuratorFramework client;
  private final boolean tagPaths;
  private final PathBuckets buckets;
  private final Observer observer = new Observer();
  private final List<MeterRegistry> registries = new CopyOnWriteArrayList<>(); // read lock-free

  /** The tags of the at-risk and lost counters registered at 0 in every registry bound. */
  private final Set<Tags> zeroed = ConcurrentHashMap.newKeySet();

  private final Object bindings = new Object(); // guards binding and closing

  @GuardedBy("bindings")
  private final List<Registered> gauges = new ArrayList<>();

  @GuardedBy("bindings")
  private boolean closed; // terminal: no more binding, nothing observed

  /** A meter registered in a registry, to remove on close. */
  private record Registered(MeterRegistry registry, Meter meter) {}

  /**
   * Measures every lock made with {@code client}, from now on, without path tags. Meters appear in
   * a registry once bound to it ({@link #bindTo(MeterRegistry)}).
   *
   * @param client a Curator client
   * @throws NullPointerException if {@code client} is null
   */
  public LockstepMetrics(CuratorFramework client) {
    this(builder(client));
  }

  private LockstepMetrics(Builder builder) {
    this.client = builder.client;
    this.tagPaths = builder.taggedPaths != null;
    this.buckets = new PathBuckets(builder.tags, builder.taggedPaths, OTHER_PATHS);
    LockObservers.of(client).addListener(observer);
  }

  /**
   * A builder of metrics for {@code client}, for path tags or extra tags.
   *
   * @param client a Curator client
   * @return a builder
   * @throws NullPointerException if {@code client} is null
   */
  public static Builder builder(CuratorFramework client) {
    return new Builder(client);
  }

  /**
   * Registers the gauges in {@code registry}, and from now on records the timers and counters there
   * too.
   *
   * @param registry the registry; binding to one already bound does nothing
   * @throws NullPointerException if {@code registry} is null
   * @throws IllegalStateException if this was closed
   */
  @Override
  public void bindTo(MeterRegistry registry) {
    Objects.requireNonNull(registry, "registry");
    synchronized (bindings) {
      if (closed) {
        throw new IllegalStateException("closed: " + this);
      }
      if (!registries.contains(registry)) {
        List<Meter> registered = new ArrayList<>();
        buckets.registerGauges(registry, WAITERS, HOLDERS, registered);
        for (Meter gauge : registered) {
          gauges.add(new Registered(registry, gauge));
        }
        registries.add(registry);
        for (Tags tags : zeroed) {
          counter(AT_RISK, tags, registry);
          counter(LOST, tags, registry);
        }
      }
    }
  }

  /**
   * Stops observing the client's locks and removes the gauges from the registries bound; the timers
   * and counters keep their totals. Closing again does nothing.
   */
  @Override
  public void close() {
    synchronized (bindings) {
      if (closed) {
        return;
      }
      closed = true;
      LockObservers.of(client).removeListener(observer);
      registries.clear();
      for (Registered gauge : gauges) {
        gauge.registry().remove(gauge.meter());
      }
      gauges.clear();
    }
  }

  /** The counter {@code name} with {@code tags} in {@code registry}, registered if new (at 0). */
  private static Counter counter(String name, Tags tags, MeterRegistry registry) {
    String description =
        name.equals(AT_RISK)
            ? "Holds of a lock put at risk: the connection was suspended while held"
            : "Holds of a lock lost: session expired, node deleted or client closed";
    return Counter.builder(name).description(description).tags(tags).register(registry);
  }

  /** Turns callbacks into meter updates. */
  private final class Observer implements LockObserver {
    @Override
    public void attemptStarted(LockAttempt attempt) {
      buckets.of(attempt).waiting.add(attempt.id());
      Tags counterTags = buckets.tagsOf(attempt);
      if (zeroed.add(counterTags)) { // the first attempt of these tags: the counters show 0
        for (MeterRegistry registry : registries) {
          counter(AT_RISK, counterTags, registry);
          counter(LOST, counterTags, registry);
        }
      }
    }

    @Override
    public void attemptEnded(
        LockAttempt attempt, AcquireOutcome outcome, Duration waited, long fencingToken) {
      PathBuckets.Bucket bucket = buckets.of(attempt);
      bucket.waiting.remove(attempt.id());
      if (outcome == AcquireOutcome.GRANTED) {
        bucket.holding.add(attempt.id());
      }
      Tags timerTags = buckets.tagsOf(attempt).and("outcome", outcome.name());
      for (MeterRegistry registry : registries) {
        Timer.builder(ACQUIRE)
            .description("Time from the start of an attempt to acquire a lock to its end")
            .tags(timerTags)
            .register(registry)
            .record(waited);
      }
    }

    @Override
    public void stateChanged(LockAttempt attempt, LockState state, long fencingToken) {
      String name;
      if (state == LockState.AT_RISK) {
        name = AT_RISK;
      } else if (state == LockState.LOST) {
        name = LOST;
        buckets.of(attempt).holding.remove(attempt.id());
      } else {
        return;
      }
      Tags counterTags = buckets.tagsOf(attempt);
      for (MeterRegistry registry : registries) {
        counter(name, counterTags, registry).increment();
      }
    }

    @Override
    public void released(LockAttempt attempt, Duration held, long fencingToken) {
      buckets.of(attempt).holding.remove(attempt.id());
      Tags timerTags = buckets.tagsOf(attempt);
      for (MeterRegistry registry : registries) {
        Timer.builder(HELD)
            .description("Time from the grant of a lock to its release")
            .tags(timerTags)
            .register(registry)
            .record(held);
      }
    }
  }

  @Override
  public String toString() {
    return "LockstepMetrics[" + client + (tagPaths ? ", paths " + buckets.tags() : "") + "]";
  }

  /**
   * Options of {@link LockstepMetrics}: the paths to tag and extra tags. Fails fast on bad input.
   *
   * <pre>{@code
   * import io.lockstep.recipes.micrometer.LockstepMetrics;
   * import io.micrometer.core.instrument.MeterRegistry;
   * import io.micrometer.core.instrument.Tags;
   * import java.util.Set;
   * import org.apache.curator.framework.CuratorFramework;
   *
   * CuratorFramework client = ...; // a started client
   * MeterRegistry meterRegistry = ...; // your application's registry
   * LockstepMetrics.builder(client)
   *     .tagPaths(Set.of("/locks/billing", "/locks/daily-report"))
   *     .tags(Tags.of("zookeeper", "orders-ensemble"))
   *     .build()
   *     .bindTo(meterRegistry);
   * }</pre>
   */
  public static final class Builder {
    private final CuratorFramework client;
    private Set<String> taggedPaths; // null: no path tag
    private Tags tags = Tags.empty();

    private Builder(CuratorFramework client) {
      this.client = Objects.requireNonNull(client, "client");
    }

    /**
     * Gives every meter a tag named {@code "path"}: the lock's path for the locks on these paths,
     * {@value LockstepMetrics#OTHER_PATHS} for all others. Keep the set small: each path adds its
     * own meters.
     *
     * @param paths the lock paths to tell apart, as the locks were made with (without the client's
     *     namespace); a multi-lock's as its paths in brackets, {@code [/a, /b]}
     * @return this builder
     * @throws NullPointerException if {@code paths} or one of them is null
     * @throws IllegalArgumentException if {@code paths} is empty or names {@value
     *     LockstepMetrics#OTHER_PATHS}
     */
    public Builder tagPaths(Set<String> paths) {
      Objects.requireNonNull(paths, "paths");
      if (paths.stream().anyMatch(Objects::isNull)) {
        throw new NullPointerException("paths must not contain null");
      }
      Set<String> copy = Set.copyOf(paths);
      if (copy.isEmpty()) {
        throw new IllegalArgumentException("paths must not be empty: name the paths to tag");
      }
      if (copy.contains(OTHER_PATHS)) {
        throw new IllegalArgumentException(
            "paths must not contain '" + OTHER_PATHS + "', the tag of every other path");
      }
      this.taggedPaths = copy;
      return this;
    }

    /**
     * Adds tags to every meter, for instance to tell clients apart in one registry.
     *
     * @param extra the tags; none may be named {@code recipe}, {@code outcome} or {@code path}
     * @return this builder
     * @throws NullPointerException if {@code extra} is null
     * @throws IllegalArgumentException if a tag has a name the meters use themselves
     */
    public Builder tags(Iterable<Tag> extra) {
      Tags given = Tags.of(Objects.requireNonNull(extra, "extra"));
      for (Tag tag : given) {
        if (Set.of("recipe", "outcome", "path").contains(tag.getKey())) {
          throw new IllegalArgumentException(
              "extra must not have a tag named '" + tag.getKey() + "': the meters set it");
        }
      }
      this.tags = given;
      return this;
    }

    /**
     * Builds the metrics, which observe the client's locks from now on.
     *
     * @return the metrics, to bind to a registry
     */
    public LockstepMetrics build() {
      return new LockstepMetrics(this);
    }
  }
}
