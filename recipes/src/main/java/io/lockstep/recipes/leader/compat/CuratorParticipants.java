package io.lockstep.recipes.leader.compat;

import io.lockstep.recipes.leader.LeaderElection;
import io.lockstep.recipes.leader.LeaderLayout;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.function.Supplier;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.leader.Participant;

/** An election's participants as Curator's leader recipes report them. */
final class CuratorParticipants {
  private CuratorParticipants() {}

  /**
   * The participants in queue order, the leader first, as Curator's {@link Participant}s: read
   * through {@code election}, or, once it is closed, through one of {@code reader} (Curator's
   * recipes read the path whatever their state).
   */
  static Collection<Participant> of(LeaderElection election, Supplier<LeaderElection> reader) {
    try {
      return of(election);
    } catch (IllegalStateException closed) {
      return of(reader.get());
    }
  }

  /**
   * The participants of a selector's path: read through {@code queued}, its election, or, if it is
   * in none (null) or closed, through one made for the read.
   */
  static Collection<Participant> ofSelector(
      CuratorFramework client, String path, LeaderElection queued) {
    Supplier<LeaderElection> reader =
        () -> LeaderElection.builder(client, path).layout(LeaderLayout.LEADER_SELECTOR).build();
    return of(queued != null ? queued : reader.get(), reader);
  }

  private static Collection<Participant> of(LeaderElection election) {
    List<Participant> participants = new ArrayList<>();
    for (io.lockstep.recipes.leader.Participant participant : election.participants()) {
      participants.add(new Participant(participant.id(), participant.leader()));
    }
    return participants;
  }

  /** The leader among {@code participants}; an empty id and no leadership if nobody leads. */
  static Participant leaderOf(Collection<Participant> participants) {
    for (Participant participant : participants) {
      if (participant.isLeader()) {
        return participant;
      }
    }
    return new Participant("", false);
  }
}
