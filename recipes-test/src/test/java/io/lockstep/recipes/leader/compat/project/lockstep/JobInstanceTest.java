package io.lockstep.recipes.leader.compat.project.lockstep;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lockstep.testing.ZooKeeperExtension;
import io.lockstep.testkit.internal.Sessions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The user's own tests of {@link JobInstance}: the same file in both packages but the package. */
@Timeout(90)
class JobInstanceTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  private final List<JobInstance> instances = new ArrayList<>();
  private final List<CuratorFramework> clients = new ArrayList<>();

  @AfterEach
  void closeInstances() {
    instances.forEach(JobInstance::close);
  }

  private JobInstance start(String id) throws Exception {
    CuratorFramework client = zk.newClient();
    JobInstance instance = new JobInstance(client, zk.path("jobs/billing"), id);
    instance.start();
    instances.add(instance);
    clients.add(client);
    return instance;
  }

  private List<JobInstance> shardingLeaders() {
    return instances.stream().filter(JobInstance::isShardingLeader).toList();
  }

  private List<JobInstance> runners() {
    return instances.stream().filter(JobInstance::isRunning).toList();
  }

  @Test
  void oneOfThreeInstances_shards_andOneRuns() throws Exception {
    JobInstance first = start("a");
    assertThat(first.awaitShardingLeadership(10_000)).isTrue(); // starting is asynchronous
    start("b");
    start("c");

    await().until(() -> runners().size() == 1);
    assertThat(shardingLeaders()).containsExactly(first);
    assertThat(first.wasToldShardingLeader()).isTrue();
    await().until(() -> first.shardingParticipants() == 3);
    for (JobInstance instance : instances) {
      assertThat(instance.shardingLeaderId()).isEqualTo("a");
      assertThat(instance.runnerLeaderId()).isEqualTo(runners().get(0).instanceId());
    }
  }

  @Test
  void executeInLeader_runsEachInstancesTask_oneAtATime() throws Exception {
    JobInstance first = start("a");
    JobInstance second = start("b");
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger mostInside = new AtomicInteger();
    AtomicInteger done = new AtomicInteger();
    Runnable task =
        () -> {
          mostInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
          try {
            Thread.sleep(50);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          inside.decrementAndGet();
          done.incrementAndGet();
        };
    String key = zk.path("jobs/billing/once");
    CompletableFuture<Void> a =
        CompletableFuture.runAsync(
            () -> {
              try {
                first.executeInLeader(key, task);
              } catch (Exception e) {
                throw new IllegalStateException(e);
              }
            });
    second.executeInLeader(key, task);
    a.get(30, TimeUnit.SECONDS);

    assertThat(done.get()).isEqualTo(2);
    assertThat(mostInside.get()).isEqualTo(1);
    CuratorFramework admin = zk.newClient();
    await().until(() -> ZooKeeperExtension.childrenOrNone(admin, key).isEmpty());
  }

  @Test
  void closingTheLeadingInstance_movesBothLeaderships_andStopsItsLoop() throws Exception {
    JobInstance first = start("a");
    assertThat(first.awaitShardingLeadership(10_000)).isTrue();
    await().until(first::isRunning);
    JobInstance second = start("b");

    first.close();
    instances.remove(first);

    assertThat(second.awaitShardingLeadership(10_000)).isTrue();
    await().until(second::isRunning);
    assertThat(first.interruptedRuns()).isEqualTo(1);
    assertThat(second.shardingLeaderId()).isEqualTo("b");
  }

  @Test
  void anExpiredSession_stopsTheLoop_andAnotherInstanceRuns_thenItRequeues() throws Exception {
    JobInstance first = start("a");
    await().until(first::isRunning);
    JobInstance second = start("b");
    CuratorFramework firstClient = clients.get(0);

    Sessions.expire(firstClient, zk.server().getConnectString());

    await().atMost(Duration.ofSeconds(30)).until(second::isRunning);
    assertThat(first.interruptedRuns()).isGreaterThanOrEqualTo(1);
    await().atMost(Duration.ofSeconds(30)).until(second::isShardingLeader);
    assertThat(first.isRunning()).isFalse();
    await().atMost(Duration.ofSeconds(30)).until(() -> second.shardingParticipants() == 2);

    second.close();
    instances.remove(second);
    await().atMost(Duration.ofSeconds(30)).until(first::isRunning);
    assertThat(first.runs()).isEqualTo(2);
  }
}
