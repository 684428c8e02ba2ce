package io.lockstep.recipes.internal.engine;

import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;
import java.util.function.Consumer;
import org.apache.curator.framework.listen.Listenable;
import org.apache.curator.framework.listen.StandardListenerManager;

/**
 * The listeners, or the observers, of one lock object: Curator's {@link StandardListenerManager},
 * made at the first {@link #addListener}. Most lock objects of a keyed service never get one, and
 * an empty manager costs about a hundred bytes per lock object, two per lock.
 */
final class Listeners<T> implements Listenable<T> {
  @SuppressWarnings("rawtypes")
  private static final AtomicReferenceFieldUpdater<Listeners, StandardListenerManager> MANAGER =
      AtomicReferenceFieldUpdater.newUpdater(
          Listeners.class, StandardListenerManager.class, "manager");

  private volatile StandardListenerManager<T> manager; // null until the first listener

  @Override
  public void addListener(T listener) {
    manager().addListener(listener);
  }

  @Override
  public void addListener(T listener, Executor executor) {
    manager().addListener(listener, executor);
  }

  @Override
  public void removeListener(T listener) {
    StandardListenerManager<T> current = manager;
    if (current != null) {
      current.removeListener(listener);
    }
  }

  /** How many are registered. */
  int size() {
    StandardListenerManager<T> current = manager;
    return current == null ? 0 : current.size();
  }

  /** Calls each, on its executor if it was added with one. */
  void forEach(Consumer<T> call) {
    StandardListenerManager<T> current = manager;
    if (current != null) {
      current.forEach(call);
    }
  }

  @SuppressWarnings("unchecked")
  private StandardListenerManager<T> manager() {
    StandardListenerManager<T> current = manager;
    if (current == null) {
      MANAGER.compareAndSet(this, null, StandardListenerManager.standard());
      current = manager;
    }
    return current;
  }
}
