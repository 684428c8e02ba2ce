package io.lockstep.recipes.internal.local;

import io.lockstep.recipes.internal.engine.LockSettings;
import io.lockstep.recipes.internal.queue.ReadWriteDriver;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.IntSupplier;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.Watcher;

/**
 * The read of the queue a place sends when its table asks ({@link PlaceStep.CheckQueue}), answered
 * as {@link PlaceEvent.QueueChecked}: for turns, whether the place's node is still alone in the
 * queue (the handoffs past the bound); for shared reads, whether no write node stands in it and
 * ours is still there.
 *
 * <p>A shared read place closed by a writer reads with its child watch, so that it hears when the
 * queue changes ({@link PlaceEvent.QueueChanged}) and readers waiting behind a writer that gave up
 * join again. One watcher object for the place, so that ZooKeeper's client keeps one watch however
 * often it reads; a change of the queue is news for the place's attempt taken last, whichever read
 * left the watch. The watch fires at the latest when the place's own node is deleted.
 */
final class QueueCheck {
  private final LockSettings settings;
  private final String path;
  private final boolean sharedReads;
  private final Watcher watcher; // shared reads only, else null
  private final Consumer<PlaceEvent> events;

  /**
   * @param lastTaken the place's attempt started last
   * @param events where answers and changes go: the place's state
   */
  QueueCheck(
      LockSettings settings,
      String path,
      boolean sharedReads,
      IntSupplier lastTaken,
      Consumer<PlaceEvent> events) {
    this.settings = settings;
    this.path = path;
    this.sharedReads = sharedReads;
    this.watcher =
        sharedReads
            ? event -> {
              if (event.getType() == Watcher.Event.EventType.NodeChildrenChanged) {
                events.accept(new PlaceEvent.QueueChanged(lastTaken.getAsInt()));
              }
            }
            : null;
    this.events = events;
  }

  /**
   * Reads the queue for the place's attempt {@code place}, whose node is {@code nodePath}, leaving
   * the place's child watch if {@code watch} (shared reads only); the answer says whether that
   * attempt is {@code lost} by then.
   */
  void send(int place, String nodePath, boolean watch, BooleanSupplier lost) {
    String ours = ZKPaths.getNodeFromPath(nodePath);
    settings
        .zk()
        .childrenOnce(
            List.of(path),
            watch ? watcher : null,
            (lists, session, zxid, failure) -> {
              boolean alone =
                  failure == null
                      && (sharedReads
                          ? lists.get(0).contains(ours)
                              && lists.get(0).stream().noneMatch(ReadWriteDriver::isWriter)
                          : lists.get(0).equals(List.of(ours)));
              events.accept(new PlaceEvent.QueueChecked(place, alone, lost.getAsBoolean()));
            });
  }
}
