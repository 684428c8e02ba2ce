package io.lockstep.testkit;

import io.lockstep.recipes.leader.LeaderElection;
import io.lockstep.recipes.locks.CountingSemaphore;
import io.lockstep.recipes.locks.LockHold;
import io.lockstep.recipes.locks.ReentrantMutex;
import io.lockstep.recipes.locks.SemaphoreMutex;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.curator.framework.CuratorFramework;

/**
 * A hold of each kind of recipe the kit's fault table covers (docs/testing.md), on a client of the
 * extension. A test that takes a leadership leaves its election after the test ({@link
 * #leaveElections()}), so that its node goes.
 */
enum HoldKind {
  REENTRANT_MUTEX {
    @Override
    LockHold hold(CuratorFramework client, String path) throws Exception {
      return new ReentrantMutex(client, path).hold();
    }
  },
  SEMAPHORE_MUTEX {
    @Override
    LockHold hold(CuratorFramework client, String path) throws Exception {
      return new SemaphoreMutex(client, path).hold();
    }
  },
  SEMAPHORE_LEASE {
    @Override
    LockHold hold(CuratorFramework client, String path) throws Exception {
      return new CountingSemaphore(client, path, 2).acquire();
    }
  },
  LEADERSHIP {
    @Override
    LockHold hold(CuratorFramework client, String path) throws Exception {
      LeaderElection election = LeaderElection.builder(client, path).build();
      elections.add(election); // left after the test, so that its node goes
      election.start();
      return election.hold();
    }
  };

  abstract LockHold hold(CuratorFramework client, String path) throws Exception;

  private static final List<LeaderElection> elections = new CopyOnWriteArrayList<>();

  /** Leaves the elections the leaderships of this JVM's last test joined. */
  static void leaveElections() {
    elections.forEach(LeaderElection::close);
    elections.clear();
  }
}
