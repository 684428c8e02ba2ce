package io.lockstep.recipes.internal.local;

/**
 * What a place shared by local holds knows of its fencing: the freshest token it can hand out and
 * whether a member took it, the node's version and whether a member took checks of it, and the
 * write of the node in flight. Owned by a {@link PlaceState}, used only under its lock.
 */
final class Fence {
  long token; // the freshest zxid the place can give as a token: the grant's, or its last write's
  boolean tokenTaken; // a member holds that token: the next one to ask needs a write
  int version; // the node's version as of the grant or our last write
  boolean checksTaken; // a member took checks of that version: the next handoff needs a write
  int write; // names the write in flight; 0 when none
  int writes; // writes sent so far, to name the next
  boolean forHolder; // the write in flight is the holder's fence, not a handoff's

  /** Whether {@code answered} names the write in flight (an answer to anything else is stale). */
  boolean isOut(int answered) {
    return write != 0 && answered == write;
  }

  /** The place was granted with {@code grantToken}; its node has never been written. */
  void granted(long grantToken) {
    token = grantToken;
    tokenTaken = false;
    version = 0;
    checksTaken = false;
    write = 0;
  }

  /** The write in flight landed at {@code zxid}, leaving the node at {@code newVersion}. */
  void written(long zxid, int newVersion) {
    write = 0;
    token = zxid;
    version = newVersion;
    tokenTaken = false;
    checksTaken = false;
  }
}
