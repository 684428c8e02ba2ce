package io.lockstep.recipes.leader;

import java.util.concurrent.CompletableFuture;

/**
 * What an {@link Election} must do next: the answers of {@link ElectionMachine}'s transitions,
 * plain values so that the table can be tested without a server. The election carries them out in
 * order, outside its lock; what {@link Leave} names, the closing caller withdraws and releases in
 * its own thread.
 */
sealed interface ElectionStep {
  /** Start attempt {@code attempt} in the queue; report its grant or failure. */
  record Enqueue(int attempt) implements ElectionStep {}

  /** Release {@code attempt} without waiting (granted, but lost already). */
  record Release(int attempt) implements ElectionStep {}

  /** Attempt {@code term} leads, with {@code epoch}: make its {@link Leadership}. */
  record NewTerm(int term, long epoch) implements ElectionStep {}

  /**
   * Read the new term's hold: if it is at risk or lost already (its notice may have come before the
   * term existed), report that as a {@link ElectionEvent.StateChanged}.
   */
  record CheckTerm(int term) implements ElectionStep {}

  /** What the listeners hear. */
  enum News {
    ELECTED,
    AT_RISK,
    RESTORED,
    LOST
  }

  /** Tell every listener {@code news} of {@code term}, in order with every other callback. */
  record Tell(News news, int term) implements ElectionStep {}

  /** The term was lost: keep why, and clear its hold without waiting. */
  record TermLost(int term) implements ElectionStep {}

  /** The term was given up: it reads RELEASED from now on. */
  record TermClosed(int term) implements ElectionStep {}

  /** Complete {@code next}, what {@code leadershipAsync()} callers wait for, with {@code term}. */
  record Complete(CompletableFuture<Leadership> next, int term) implements ElectionStep {}

  /** Why waiting for leadership ended without it. */
  enum Ending {
    /** The election was closed. */
    CLOSED,
    /** Its client was closed: the election stops. */
    CLIENT_CLOSED
  }

  /** Fail {@code next} with {@code ending}. */
  record Fail(CompletableFuture<Leadership> next, Ending ending) implements ElectionStep {}

  /** Enter the queue again after {@code delayMillis}: {@code failure} kept the last attempt out. */
  record RetryLater(long delayMillis, Throwable failure) implements ElectionStep {}

  /**
   * The closing caller leaves: once the steps before this one have run, complete {@code reached};
   * the caller then withdraws {@code attempt} (releases it if it was granted meanwhile) and
   * releases {@code term}'s node (the leader's, or waits for the delete of a term given up
   * meanwhile), each 0 for none, in its own thread, waiting as a release does.
   */
  record Leave(int attempt, int term, CompletableFuture<Void> reached) implements ElectionStep {}
}
