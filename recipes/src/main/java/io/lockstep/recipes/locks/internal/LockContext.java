package io.lockstep.recipes.locks.internal;

import io.lockstep.recipes.locks.LockState;
import io.lockstep.recipes.locks.LockStateChange;
import io.lockstep.recipes.locks.LockStateListener;
import java.util.Objects;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.listen.Listenable;
import org.apache.curator.framework.listen.StandardListenerManager;

/** What every acquisition of one lock object shares: the client, the lock's name, its listeners. */
public final class LockContext {
  private final ZkAsync zk;
  private final String description;
  private final StandardListenerManager<LockStateListener> listeners =
      StandardListenerManager.standard();

  /**
   * @param description the lock path, or the paths of a multi-lock, for messages and events
   */
  public LockContext(CuratorFramework client, String description) {
    this.zk = new ZkAsync(client);
    this.description = Objects.requireNonNull(description, "description");
  }

  public CuratorFramework client() {
    return zk.client();
  }

  ZkAsync zk() {
    return zk;
  }

  /** The lock path (or paths) for messages. */
  public String description() {
    return description;
  }

  public Listenable<LockStateListener> listeners() {
    return listeners;
  }

  /** Tells every listener that a hold entered {@code state}. */
  void emit(LockState state, long fencingToken) {
    LockStateChange change = new LockStateChange(description, state, fencingToken);
    listeners.forEach(listener -> listener.stateChanged(change));
  }
}
