package io.lockstep.recipes.internal.owner;

import io.lockstep.recipes.internal.engine.Acquisition;
import io.lockstep.recipes.internal.engine.Attempt;
import io.lockstep.recipes.internal.engine.AttemptFactory;
import io.lockstep.recipes.internal.engine.LockSettings;
import io.lockstep.recipes.internal.local.LocalPlace;
import io.lockstep.recipes.internal.queue.ReadWriteDriver;
import io.lockstep.recipes.internal.queue.Slot;
import io.lockstep.recipes.internal.zk.Callbacks;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.ZKPaths;

/**
 * The two hold tables of one {@link ReadWriteMutex}, and the rules between them: a thread holding
 * the write lock that takes the read lock ties its read node to its write node (a downgrade), and
 * only while that write hold is not lost; a thread holding only the read lock may not wait for the
 * write lock (it would wait for itself). Both views share this, as {@code ReentrantReadWriteLock}'s
 * views share their {@code Sync}.
 */
public final class ReadWriteOwnership {
  private final String path;
  private final byte[] data;
  private final ThreadOwnership reads;
  private final ThreadOwnership writes;
  private final List<Slot> read; // a plain read hold's queue, the same for every acquire
  private final List<Slot> write; // a write hold's

  /**
   * @param data the data of every lock node, or null for the client's default data
   * @param localHandoffs 0, or the bound of a lock whose readers share one node and whose writers
   *     hand off locally
   * @param lingerNanos how long the shared read node is kept with no reader (0: not kept)
   */
  public ReadWriteOwnership(
      CuratorFramework client, String path, byte[] data, int localHandoffs, long lingerNanos) {
    this.path = path;
    this.data = data == null ? null : data.clone();
    this.write = Slot.of(path, ReadWriteDriver.WRITE, this.data).alone();
    this.read = Slot.of(path, ReadWriteDriver.READ, this.data).alone();
    LockSettings writeSettings = LockSettings.of(client, path, "ReadWriteMutex.WriteLock");
    LockSettings readSettings = LockSettings.of(client, path, "ReadWriteMutex.ReadLock");
    AttemptFactory writeAttempts;
    AttemptFactory readAttempts;
    if (localHandoffs == 0) {
      writeAttempts = AttemptFactory.plain(writeSettings);
      readAttempts = AttemptFactory.plain(readSettings);
    } else {
      LocalPlace readPlace = LocalPlace.sharedReads(readSettings, read.get(0));
      writeAttempts = writesTellingReaders(writeSettings, localHandoffs, readPlace);
      readAttempts = sharedReads(readSettings, localHandoffs, lingerNanos, readPlace);
    }
    this.writes =
        new ThreadOwnership(
            writeAttempts, this::writeSlots, null, new Handles(writeAttempts, () -> write, null));
    this.reads =
        new ThreadOwnership(
            readAttempts, this::readSlots, null, new Handles(readAttempts, () -> read, null));
  }

  public ThreadOwnership reads() {
    return reads;
  }

  public ThreadOwnership writes() {
    return writes;
  }

  /**
   * A plain read node, or, for the write holder, a read node tied to its write node: created in one
   * transaction with a check of the write node, so that ZooKeeper refuses it once the write node is
   * gone.
   *
   * @throws LockOwnershipLostException if the thread's write hold was lost
   */
  private List<Slot> readSlots(Thread thread) {
    Attempt writeHold = writes.heldBy(thread);
    if (writeHold == null) {
      return read;
    }
    writeHold.checkNotLost();
    LocalPlace.yieldAtRelease(writeHold); // no local writer may follow while the tie stands
    String writeNode = writeHold.nodePaths().get(0);
    String sequence = ReadWriteDriver.sequenceOf(ZKPaths.getNodeFromPath(writeNode));
    return Slot.tiedTo(path, ReadWriteDriver.READ, data, sequence, writeNode).alone();
  }

  /**
   * Writers that hand off locally, and tell the read place while one waits (readers do not join it
   * meanwhile).
   */
  private AttemptFactory writesTellingReaders(
      LockSettings settings, int localHandoffs, LocalPlace readPlace) {
    AttemptFactory places = LocalPlace.attempts(settings, write.get(0), localHandoffs, 0);
    return new AttemptFactory() { // the places' own factory tracks the attempts for close
      @Override
      public Attempt start(List<Slot> slots, Runnable revocationHandler) {
        readPlace.localWriter(true, false);
        Attempt attempt;
        try {
          attempt = places.start(slots, revocationHandler);
        } catch (RuntimeException e) {
          readPlace.localWriter(false, false);
          throw e;
        }
        Callbacks.when(attempt.grantedFuture(), (v, f) -> readPlace.localWriter(false, f == null));
        return attempt;
      }

      @Override
      public LockSettings settings() {
        return places.settings();
      }

      @Override
      public void close() {
        places.close();
      }
    };
  }

  /**
   * Readers on the process's shared read node; a downgrade (a read node tied to the thread's write
   * node) is an attempt of its own.
   */
  private static AttemptFactory sharedReads(
      LockSettings settings, int localHandoffs, long lingerNanos, LocalPlace readPlace) {
    return AttemptFactory.of(
        settings,
        (lockSettings, slots, revocationHandler) ->
            slots.get(0).tiedTo() != null
                ? Acquisition.start(lockSettings, slots, null, null, null)
                : readPlace.join(lockSettings, localHandoffs, lingerNanos),
        readPlace::closed);
  }

  /** Null (may not wait) for a thread that holds the read lock but not the write lock. */
  private List<Slot> writeSlots(Thread thread) {
    return reads.heldBy(thread) != null ? null : write;
  }
}
