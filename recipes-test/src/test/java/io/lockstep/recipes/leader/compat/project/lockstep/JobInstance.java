package io.lockstep.recipes.leader.compat.project.lockstep;

import io.lockstep.recipes.leader.compat.LeaderLatch;
import io.lockstep.recipes.leader.compat.LeaderSelector;
import java.io.Closeable;
import java.io.IOException;
import java.util.Collection;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.recipes.leader.LeaderSelectorListenerAdapter;
import org.apache.curator.framework.recipes.leader.Participant;

/**
 * A user's code, written for Curator (a job instance of a registry center, as ElasticJob-style
 * schedulers run them): a {@code LeaderLatch} elects the instance that shards the job, a {@code
 * LeaderSelector} the one that runs its loop, stepping down through {@code
 * LeaderSelectorListenerAdapter} when its connection is lost. The same file in package {@code
 * ...project.lockstep} differs only in the two imports of the leader classes ({@code
 * ImportOnlyMigrationTest} checks it).
 */
public final class JobInstance implements Closeable {
  private static final Logger log = Logger.getLogger(JobInstance.class.getName());

  private final CuratorFramework client;
  private final String instanceId;
  private final LeaderLatch shardingLatch;
  private final LeaderSelector runner;
  private final AtomicInteger runs = new AtomicInteger();
  private final AtomicInteger interruptedRuns = new AtomicInteger();
  private final AtomicInteger running = new AtomicInteger();
  private volatile boolean toldShardingLeader;

  public JobInstance(CuratorFramework client, String jobPath, String instanceId) {
    this.client = client;
    this.instanceId = instanceId;
    this.shardingLatch = new LeaderLatch(client, jobPath + "/sharding", instanceId);
    this.shardingLatch.addListener(
        new LeaderLatchListener() {
          @Override
          public void isLeader() {
            toldShardingLeader = true;
          }

          @Override
          public void notLeader() {
            toldShardingLeader = false;
          }
        });
    this.runner =
        new LeaderSelector(
            client,
            jobPath + "/runner",
            new LeaderSelectorListenerAdapter() {
              @Override
              public void takeLeadership(CuratorFramework curator) throws Exception {
                runLoop();
              }
            });
    this.runner.setId(instanceId);
    this.runner.autoRequeue();
  }

  public void start() throws Exception {
    shardingLatch.start();
    runner.start();
  }

  /** The job loop: runs until its leadership is taken away (an interrupt). */
  private void runLoop() {
    runs.incrementAndGet();
    running.incrementAndGet();
    try {
      while (!Thread.currentThread().isInterrupted()) {
        Thread.sleep(5);
      }
    } catch (InterruptedException e) {
      interruptedRuns.incrementAndGet();
      Thread.currentThread().interrupt();
    } finally {
      running.decrementAndGet();
    }
  }

  /** Runs {@code task} once this instance leads {@code key}, then leaves: a one-off election. */
  public void executeInLeader(String key, Runnable task) throws Exception {
    try (LeaderLatch latch = new LeaderLatch(client, key)) {
      latch.start();
      latch.await();
      task.run();
    }
  }

  public boolean awaitShardingLeadership(long millis) throws InterruptedException {
    return shardingLatch.await(millis, TimeUnit.MILLISECONDS);
  }

  public boolean isShardingLeader() {
    return shardingLatch.hasLeadership();
  }

  public boolean wasToldShardingLeader() {
    return toldShardingLeader;
  }

  public boolean isRunning() {
    return runner.hasLeadership() && running.get() > 0;
  }

  public String shardingLeaderId() throws Exception {
    Participant leader = shardingLatch.getLeader();
    return leader.isLeader() ? leader.getId() : null;
  }

  public String runnerLeaderId() throws Exception {
    return runner.getLeader().getId();
  }

  public int shardingParticipants() throws Exception {
    Collection<Participant> participants = shardingLatch.getParticipants();
    return participants.size();
  }

  public String instanceId() {
    return instanceId;
  }

  public int runs() {
    return runs.get();
  }

  public int interruptedRuns() {
    return interruptedRuns.get();
  }

  @Override
  public void close() {
    runner.close();
    try {
      shardingLatch.close();
    } catch (IOException e) {
      log.log(Level.WARNING, "closing the sharding latch of " + instanceId, e);
    }
  }
}
