package io.lockstep.chaos;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.TreeSet;

/**
 * The checks of a run's election that the exclusion checker does not make: every leadership has an
 * epoch of its own, and no write behind a leader's ownership checks commits after a newer epoch was
 * elected (the newer election was decided after the old leader's node was gone, so such a write
 * committed under a lost leadership).
 */
final class ElectionChecks {
  private ElectionChecks() {}

  /** A leadership as its participant was told: its epoch, who, when (nanoTime). */
  record Elected(long epoch, String participant, long at) {}

  /** Two leaderships with one epoch, described. */
  static List<String> sharedEpochs(Collection<Elected> elections) {
    List<String> problems = new ArrayList<>();
    Map<Long, Elected> byEpoch = new HashMap<>();
    for (Elected elected : elections) {
      Elected earlier = byEpoch.putIfAbsent(elected.epoch(), elected);
      if (earlier != null) {
        problems.add(
            "two leaderships with epoch " + elected.epoch() + ": " + earlier + ", " + elected);
      }
    }
    return problems;
  }

  /**
   * Writes to {@code node} committed at a zxid above an epoch elected after the writer's own: the
   * writer's leadership had ended when the write committed.
   */
  static List<String> commitsAfterANewerEpoch(
      String node, Collection<ChaosRun.Commit> commits, Collection<Elected> elections) {
    NavigableSet<Long> epochs = new TreeSet<>();
    elections.forEach(elected -> epochs.add(elected.epoch()));
    List<String> problems = new ArrayList<>();
    for (ChaosRun.Commit commit : commits) {
      if (!commit.node().equals(node)) {
        continue;
      }
      Long newer = epochs.higher(commit.token());
      if (newer != null && newer < commit.zxid()) {
        problems.add(
            "write of the leader of epoch "
                + commit.token()
                + " committed at zxid "
                + commit.zxid()
                + ", after epoch "
                + newer
                + " was elected");
      }
    }
    return problems;
  }
}
