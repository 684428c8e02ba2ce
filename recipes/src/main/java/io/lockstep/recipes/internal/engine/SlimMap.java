package io.lockstep.recipes.internal.engine;

import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;

/**
 * A concurrent map for a lock object's own tables (its attempts under way, its holding threads),
 * which are empty while the lock object is idle and hold one entry most of the time: no entry costs
 * nothing but the field, one entry is kept in a small record, and a {@link ConcurrentHashMap} is
 * made only once two entries are there at the same time (and kept from then on: dropping it when it
 * empties could lose an entry put into it meanwhile). An idle lock object per key so keeps none of
 * the map's table, which a {@code ConcurrentHashMap} keeps once used.
 *
 * <p>Keys are compared with {@code equals}. Updates are lock-free; reads see every update that
 * completed before them.
 *
 * @param <K> the keys
 * @param <V> the values
 */
public final class SlimMap<K, V> {
  @SuppressWarnings("rawtypes")
  private static final AtomicReferenceFieldUpdater<SlimMap, Object> STATE =
      AtomicReferenceFieldUpdater.newUpdater(SlimMap.class, Object.class, "state");

  /** The one entry. */
  private record One(Object key, Object value) {}

  private volatile Object state; // null (no entry), a One, or a ConcurrentHashMap<K, V>

  /** The value of {@code key}, or null. */
  @SuppressWarnings("unchecked")
  public V get(K key) {
    Object now = state;
    if (now instanceof One one) {
      return one.key.equals(key) ? (V) one.value : null;
    }
    return now == null ? null : ((ConcurrentHashMap<K, V>) now).get(key);
  }

  /** Maps {@code key} to {@code value}, replacing any value it had. */
  @SuppressWarnings("unchecked")
  public void put(K key, V value) {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(value, "value");
    while (true) {
      Object now = state;
      if (now == null) {
        if (STATE.compareAndSet(this, null, new One(key, value))) {
          return;
        }
      } else if (now instanceof One one) {
        Object next;
        if (one.key.equals(key)) {
          next = new One(key, value);
        } else {
          ConcurrentHashMap<K, V> many = new ConcurrentHashMap<>(4);
          many.put((K) one.key, (V) one.value);
          many.put(key, value);
          next = many;
        }
        if (STATE.compareAndSet(this, one, next)) {
          return;
        }
      } else {
        ((ConcurrentHashMap<K, V>) now).put(key, value);
        return;
      }
    }
  }

  /** Removes {@code key}'s entry, if it has one. */
  @SuppressWarnings("unchecked")
  public void remove(K key) {
    while (true) {
      Object now = state;
      if (now instanceof One one) {
        if (!one.key.equals(key) || STATE.compareAndSet(this, one, null)) {
          return;
        }
      } else {
        if (now != null) {
          ((ConcurrentHashMap<K, V>) now).remove(key);
        }
        return;
      }
    }
  }

  /** Whether the map has no entry. */
  @SuppressWarnings("unchecked")
  public boolean isEmpty() {
    Object now = state;
    return now == null || (!(now instanceof One) && ((ConcurrentHashMap<K, V>) now).isEmpty());
  }

  /**
   * The values, weakly consistent as a {@code ConcurrentHashMap}'s: each value present throughout
   * is seen, and one put or removed meanwhile may or may not be.
   */
  @SuppressWarnings("unchecked")
  public Collection<V> values() {
    Object now = state;
    if (now instanceof One one) {
      return List.of((V) one.value);
    }
    return now == null ? List.of() : ((ConcurrentHashMap<K, V>) now).values();
  }
}
