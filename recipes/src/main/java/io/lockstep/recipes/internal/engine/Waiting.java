package io.lockstep.recipes.internal.engine;

import io.lockstep.recipes.internal.engine.Step.ArmedWatch;

/**
 * What a waiting attempt knows of its reads and its predecessor watch: whether the read in flight
 * leaves a child watch, which watch is current, whether the watched node is the head, and the armed
 * watch to withdraw when the attempt moves on. Owned by an {@link AcquisitionState}, used only
 * under its lock.
 */
final class Waiting {
  private ArmedWatch watch; // the predecessor watch, once armed
  private int generation; // names the latest predecessor watch asked for
  private boolean watchIsHead; // the watched node is the head of an append-only queue
  private boolean readWatched; // the read in flight leaves a child watch
  private boolean childWatch; // the latest watch asked for is a child watch on a directory

  /** A read of the queue; only the first of an attempt may leave a child watch. */
  Step.ReadQueue read(int epoch, boolean watchQueue) {
    readWatched = watchQueue;
    return new Step.ReadQueue(epoch, watchQueue);
  }

  /** The first read was sent behind the create; {@code watched} if it leaves a child watch. */
  void readBehindCreate(boolean watched) {
    readWatched = watched;
  }

  /** The read was answered: whether it left a child watch. */
  boolean answered() {
    boolean watched = readWatched;
    readWatched = false;
    return watched;
  }

  /** Watch {@code path}, a new generation; {@code head} if it is the head of the queue. */
  Step.Watch watch(int epoch, String path, boolean head) {
    readWatched = false;
    watchIsHead = head;
    childWatch = false;
    return new Step.Watch(epoch, ++generation, path);
  }

  /**
   * Wait for a change of the children of {@code directory}, a new generation: a getChildren that
   * leaves a child watch, and whose answer is judged ({@link StateEvent.QueueWatched}).
   */
  Step.Watch watchChildren(int epoch, String directory) {
    readWatched = false;
    watchIsHead = false;
    childWatch = true;
    return new Step.Watch(epoch, ++generation, directory, true);
  }

  /** Whether {@code answeredGeneration} is the latest watch asked for, and a child watch. */
  boolean isCurrentChildWatch(int answeredGeneration) {
    return childWatch && answeredGeneration == generation;
  }

  /** Whether the latest watch asked for is a child watch (its firing arms the next one). */
  boolean watchesChildren() {
    return childWatch;
  }

  /** Records the armed watch of {@code armedGeneration}; false if it is no longer wanted. */
  boolean arm(int armedGeneration, ArmedWatch armed) {
    if (armedGeneration != generation || watch != null) {
      return false;
    }
    watch = armed;
    return true;
  }

  /** The watch of {@code firedGeneration} fired: true if it is the current one (now forgotten). */
  boolean fired(int firedGeneration) {
    if (firedGeneration != generation) {
      return false;
    }
    watch = null;
    return true;
  }

  /** Whether the node watched was the head of an append-only queue. */
  boolean watchedHead() {
    return watchIsHead;
  }

  /** The armed watch, handed to a cleanup; null if none. */
  ArmedWatch takeWatch() {
    ArmedWatch armed = watch;
    watch = null;
    return armed;
  }
}
