package io.lockstep.recipes.micrometer;

import io.lockstep.recipes.locks.LockAttempt;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The attempts under way and the holds held of one client's locks, by path tag, and the tags of
 * their meters: one bucket per tagged path and one for every other path, or a single bucket when
 * paths are not tagged.
 */
final class PathBuckets {
  /* The gauges count attempt ids, not events: a bucket keeps the ids of the attempts under way and
   * of the holds held. attemptStarted adds to waiting; attemptEnded removes from waiting and, when
   * granted, adds to holding; LOST and released remove from holding. Removing an id that is not
   * there does nothing, so an attempt that began before the observer was added never drives a
   * gauge below zero. The engine tells one attempt's callbacks in order.
   */

  /** The attempts under way and the holds held, of one path tag. */
  static final class Bucket {
    final String pathTag; // null when paths are not tagged
    final Set<Long> waiting = ConcurrentHashMap.newKeySet();
    final Set<Long> holding = ConcurrentHashMap.newKeySet();

    Bucket(String pathTag) {
      this.pathTag = pathTag;
    }
  }

  private final Tags tags;
  private final Map<String, Bucket> buckets; // by path tag; one bucket under "" when untagged
  private final Bucket others;

  /**
   * Buckets for {@code taggedPaths}, and one tagged {@code otherTag} for the rest; a single
   * untagged bucket when {@code taggedPaths} is null.
   */
  PathBuckets(Tags tags, Set<String> taggedPaths, String otherTag) {
    this.tags = tags;
    Map<String, Bucket> byTag = new LinkedHashMap<>();
    if (taggedPaths != null) {
      for (String path : taggedPaths) {
        byTag.put(path, new Bucket(path));
      }
      byTag.put(otherTag, new Bucket(otherTag));
    } else {
      byTag.put("", new Bucket(null));
    }
    this.buckets = Map.copyOf(byTag);
    this.others = taggedPaths != null ? buckets.get(otherTag) : buckets.get("");
  }

  Bucket of(LockAttempt attempt) {
    return buckets.getOrDefault(attempt.path(), others);
  }

  /** The tags of {@code attempt}'s meters: the extra tags, its path tag, its recipe. */
  Tags tagsOf(LockAttempt attempt) {
    return tagsOf(of(attempt)).and("recipe", attempt.recipe());
  }

  /** Registers the waiters and holders gauges of every bucket in {@code registry}. */
  void registerGauges(MeterRegistry registry, String waiters, String holders, List<Meter> into) {
    for (Bucket bucket : buckets.values()) {
      Tags gaugeTags = tagsOf(bucket);
      into.add(
          Gauge.builder(waiters, bucket, b -> b.waiting.size())
              .description("Attempts to acquire a lock under way")
              .tags(gaugeTags)
              .strongReference(true)
              .register(registry));
      into.add(
          Gauge.builder(holders, bucket, b -> b.holding.size())
              .description("Holds of a lock granted and neither released nor lost")
              .tags(gaugeTags)
              .strongReference(true)
              .register(registry));
    }
  }

  /** The tagged paths, for {@code toString}. */
  Set<String> tags() {
    return buckets.keySet();
  }

  private Tags tagsOf(Bucket bucket) {
    return bucket.pathTag == null ? tags : tags.and("path", bucket.pathTag);
  }
}
