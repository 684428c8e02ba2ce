package io.lockstep.recipes.locks;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException.Code;

/**
 * Puts our node in every queue: sends the create (once; never blindly retried), creates missing
 * lock directories, and after a create whose answer was lost finds our node by its protection id.
 * Every answer goes to the {@link AcquisitionState}; the step it returns goes to {@code next}.
 */
final class Enqueuer {
  private final ZkRequests zk;
  private final List<Slot> slots;
  private final List<String> lockPaths;
  private final AcquisitionState state;
  private final Consumer<Step> next;

  Enqueuer(ZkRequests zk, List<Slot> slots, AcquisitionState state, Consumer<Step> next) {
    this.zk = zk;
    this.slots = List.copyOf(slots);
    this.lockPaths = lockPaths(slots);
    this.state = state;
    this.next = next;
  }

  static List<String> lockPaths(List<Slot> slots) {
    List<String> paths = new ArrayList<>(slots.size());
    for (Slot slot : slots) {
      paths.add(slot.path());
    }
    return List.copyOf(paths);
  }

  /** One create, or one multi of creates (with the check of a downgrade's write node). */
  void create(Step.Create step) {
    int e = step.epoch();
    Callbacks.when(
        zk.create(slots, step.protectionId()),
        (created, failure) -> {
          if (failure == null) {
            next.accept(
                state.on(
                    new StateEvent.Created(
                        e, created.nodePaths(), created.czxid(), created.owner())));
          } else if (Retries.unwrap(failure) instanceof ZkRequests.TieRefused) {
            String writeNode = ((ZkRequests.TieRefused) Retries.unwrap(failure)).getPath();
            next.accept(state.on(new StateEvent.TieRefused(e, writeNode)));
          } else {
            next.accept(state.on(new StateEvent.CreateFailed(e, failure)));
          }
        });
  }

  /**
   * Creates the lock directories as containers, one after another. A container can be reaped
   * between its creation and our create: then the create fails again and we come back here.
   */
  void createParents(Step.CreateParents step) {
    int e = step.epoch();
    CompletableFuture<Void> parents = CompletableFuture.completedFuture(null);
    for (String path : lockPaths) {
      parents = parents.thenCompose(v -> zk.createContainers(path));
    }
    Callbacks.when(
        parents, (v, failure) -> next.accept(state.on(new StateEvent.ParentsCreated(e, failure))));
  }

  /**
   * Reads the queues and looks for our protection id. A node found there is ours only if its
   * ephemeral owner is the session that read it (the state decides); a node of an earlier session,
   * which Curator abandoned, is deleted.
   */
  void findOwnNode(Step.FindOwnNode step) {
    int e = step.epoch();
    String prefix = NodeNames.prefix(step.protectionId());
    Callbacks.when(
        zk.children(lockPaths, null),
        (children, failure) -> {
          if (failure != null) {
            next.accept(state.on(new StateEvent.OwnNodeSearchFailed(e, failure)));
            return;
          }
          List<String> found = new ArrayList<>();
          for (int i = 0; i < slots.size(); i++) {
            for (String child : children.lists().get(i)) {
              if (child.startsWith(prefix)) {
                found.add(ZKPaths.makePath(lockPaths.get(i), child));
                break;
              }
            }
          }
          if (found.isEmpty()) {
            next.accept(
                state.on(
                    new StateEvent.OwnNodeSearched(e, found, false, 0, 0, children.session())));
            return;
          }
          boolean complete = found.size() == slots.size();
          Callbacks.when(
              zk.getData(found.get(0), null),
              (data, readFailure) -> {
                if (readFailure == null) {
                  next.accept(
                      state.on(
                          new StateEvent.OwnNodeSearched(
                              e,
                              found,
                              complete,
                              data.stat().getEphemeralOwner(),
                              data.stat().getCzxid(),
                              data.session())));
                } else if (Retries.code(readFailure) == Code.NONODE) {
                  next.accept(
                      state.on(
                          new StateEvent.OwnNodeSearched(
                              e, found, false, 0, 0, children.session())));
                } else {
                  next.accept(state.on(new StateEvent.OwnNodeSearchFailed(e, readFailure)));
                }
              });
        });
  }
}
