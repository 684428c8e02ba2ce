package io.lockstep.recipes.internal.engine;

import io.lockstep.recipes.internal.zk.Retries;
import java.util.List;
import java.util.OptionalLong;
import java.util.function.Supplier;
import org.apache.zookeeper.KeeperException.Code;

/**
 * The bookkeeping of putting our nodes in the queues, for one epoch: the protection id, whether a
 * create is unanswered or its outcome unknown, retry and parent-creation counts, and the step a
 * retry delay stands for. It decides what a failed create or search leads to; the {@link
 * AcquisitionState} that owns it applies the decision. Not thread-safe: used only under the owner's
 * lock.
 */
final class Enqueuing {
  /**
   * How many times in a row a create finds a lock directory missing (and is sent again with it)
   * before the attempt gives up.
   */
  static final int MAX_DIRECTORY_SENDS = 5;

  private final int epoch;
  private final Retries retries;
  private final long startNanos;
  private final Supplier<String> protectionIds;
  private String protectionId;
  private boolean unanswered; // a create was sent and its answer has not come
  private boolean recovering; // a create's answer was lost: searching for our node
  private int retryCount;
  private int directorySends;
  private Step afterDelay; // the step a pending Later stands for

  Enqueuing(int epoch, Retries retries, long startNanos, Supplier<String> protectionIds) {
    this.epoch = epoch;
    this.retries = retries;
    this.startNanos = startNanos;
    this.protectionIds = protectionIds;
    this.protectionId = protectionIds.get();
  }

  int epoch() {
    return epoch;
  }

  /** The create to send now. */
  Step.Create send() {
    unanswered = true;
    recovering = false;
    return new Step.Create(epoch, protectionId);
  }

  /** The create to send now with the lock directories, which a create found missing. */
  private Step.CreateWithDirectories sendWithDirectories() {
    unanswered = true;
    return new Step.CreateWithDirectories(epoch, protectionId);
  }

  /** Whether a create was sent and not answered. */
  boolean unanswered() {
    return unanswered;
  }

  /** The create's answer came (or will be ignored: the client closed). */
  void answered() {
    unanswered = false;
  }

  /** Whether we are searching for our node after a lost answer. */
  boolean recovering() {
    return recovering;
  }

  /** The protection id of a create that may have happened, to sweep for; null if none. */
  String unknownCreate() {
    return recovering ? protectionId : null;
  }

  /**
   * What a failed create leads to in a waiting attempt: create parents, search for our node, send
   * again after a delay; null when the attempt must fail.
   */
  Step failed(Throwable failure) {
    unanswered = false;
    Code code = Retries.code(failure);
    if (code == Code.NONODE) {
      return ++directorySends > MAX_DIRECTORY_SENDS ? null : sendWithDirectories();
    }
    if (isOutcomeUnknown(code)) {
      recovering = true;
      return retry(new Step.FindOwnNode(epoch, protectionId));
    }
    if (code == Code.SESSIONMOVED) {
      return retry(new Step.Create(epoch, protectionId)); // refused: not applied
    }
    return null;
  }

  /** What a create's failure leaves when the attempt already ended: a sweep if it may exist. */
  Step.Tidy abandoned(Throwable failure) {
    unanswered = false;
    return new Step.Tidy(
        isOutcomeUnknown(Retries.code(failure))
            ? Step.Cleanup.sweep(protectionId)
            : Step.Cleanup.NONE,
        true);
  }

  /** The search found nothing: the create never happened, and its id is safe to reuse. */
  Step.Create notFound() {
    return send();
  }

  /** The search found a node that is not ours to hold: a new id, then create again. */
  Step.Create foundForeign() {
    protectionId = protectionIds.get();
    return send();
  }

  /** The search found our node, adopted by the owner. */
  void found() {
    recovering = false;
  }

  /** The search failed: search again later; null to fail. */
  Step searchFailed() {
    return retry(new Step.FindOwnNode(epoch, protectionId));
  }

  /** The step a delay stood for, once; null if none is pending. */
  Step due() {
    Step next = afterDelay;
    afterDelay = null;
    if (next instanceof Step.Create) {
      unanswered = true;
    }
    return next;
  }

  /** The first create of a requeued epoch waits for a delay: it is due then. */
  void createAfterDelay() {
    afterDelay = new Step.Create(epoch, protectionId);
  }

  /** Forgets a pending delay (the attempt ended). */
  void cancelDelay() {
    afterDelay = null;
  }

  /**
   * What a waiting attempt leaves to clean up when it ends now: its {@code nodes}, its armed {@code
   * watch}, a create whose outcome is unknown or whose answer is still out; the delay is forgotten.
   */
  Step.Cleanup leave(List<String> nodes, Step.ArmedWatch watch) {
    cancelDelay();
    return new Step.Cleanup(nodes, watch, unknownCreate(), unanswered, false);
  }

  /** A Later standing for {@code next}, as the retry policy allows; null when it gives up. */
  private Step retry(Step next) {
    OptionalLong delay = retries.delayMillis(retryCount++, startNanos);
    if (delay.isEmpty()) {
      return null;
    }
    afterDelay = next;
    return new Step.Later(epoch, delay.getAsLong());
  }

  /**
   * Whether a create that failed with {@code code} may have been applied. A create answered
   * SESSIONEXPIRED may have been: the client can end its session on its own (Curator's connection
   * manager after a long SUSPENDED, or a test's injected expiry) while the server keeps it until
   * its own timeout, and a create in flight then fails in the client yet stands on the server under
   * the old session, at the head of the queue, until that timeout. So it is searched for by its
   * protection id and deleted, as after a lost answer.
   */
  private static boolean isOutcomeUnknown(Code code) {
    return code == Code.CONNECTIONLOSS
        || code == Code.OPERATIONTIMEOUT
        || code == Code.SESSIONEXPIRED
        // only a node tied to a fixed suffix can exist already: a retry of our own create
        || code == Code.NODEEXISTS;
  }
}
