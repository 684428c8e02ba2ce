package io.lockstep.recipes.leader;

import java.util.Objects;

/**
 * One participant of an election, as read from its node: the id it registered with and whether it
 * leads (it is first in the queue). Lockstep's and Curator's participants of one path read alike.
 *
 * @param id the participant id (its node's data as UTF-8; for a {@link
 *     LeaderLayout#LEADER_SELECTOR} participant without an id, the client's default node data, as
 *     Curator's selector writes it)
 * @param leader whether this participant is first in the queue
 */
public record Participant(String id, boolean leader) {
  /**
   * Checks the components.
   *
   * @param id the participant id
   * @param leader whether it leads
   * @throws NullPointerException if {@code id} is null
   */
  public Participant {
    Objects.requireNonNull(id, "id");
  }
}
