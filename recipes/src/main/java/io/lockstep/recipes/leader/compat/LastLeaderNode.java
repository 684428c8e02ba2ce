package io.lockstep.recipes.leader.compat;

import io.lockstep.recipes.leader.LeaderElection;
import io.lockstep.recipes.leader.Leadership;
import io.lockstep.recipes.leader.LeadershipListener;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The node of the last leadership of a latch's election, as Curator's latch keeps it for {@code
 * getLastPathIsLeader()}: the current leadership's while there is one (so it is set whenever the
 * latch leads, as Curator's is set before its latch leads), kept at each election for after the
 * leadership and the latch end.
 */
final class LastLeaderNode implements LeadershipListener {
  private final LeaderElection election;
  private final AtomicReference<String> kept = new AtomicReference<>(); // null until elected once

  LastLeaderNode(LeaderElection election) {
    this.election = election;
  }

  /** The node of the current or last leadership, or null if the latch never led. */
  String get() {
    return election.leadership().flatMap(this::nodeOf).orElseGet(kept::get);
  }

  /**
   * Keeps the node of the current leadership, if there is one: the latch is closing, and its
   * listener may not have heard that election yet (it runs on a Lockstep thread, which may come
   * after the caller saw the latch lead), so a latch that leads up to its close keeps its node.
   */
  void keepCurrent() {
    election.leadership().ifPresent(this::elected);
  }

  @Override
  public void elected(Leadership leadership) {
    nodeOf(leadership).ifPresent(kept::set);
  }

  /**
   * The node of {@code leadership}, read between two reads of the election's leadership: one never
   * holds again once it ended, so if it holds at both, the node read between them, the election's
   * node, is its own. Empty if it ended first: a leadership lost before its node is read is not
   * kept, where Curator's latch keeps the node of a leadership however short.
   */
  private Optional<String> nodeOf(Leadership leadership) {
    if (!isCurrent(leadership)) {
      return Optional.empty();
    }
    Optional<String> node = election.nodePath();
    return isCurrent(leadership) ? node : Optional.empty();
  }

  private boolean isCurrent(Leadership leadership) {
    return election.leadership().filter(now -> now == leadership).isPresent();
  }
}
