package io.lockstep.recipes.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.locks.LockHold;
import io.lockstep.recipes.locks.ReadWriteMutex;
import io.lockstep.testing.ZooKeeperExtension;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Readers sharing one read node are holds like any other to the meters and the Flight Recorder:
 * each is an acquisition, a holder, and a loss when the shared node goes.
 */
@Timeout(60)
class ReadSharingMetricsTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  private static final String READ = "ReadWriteMutex.ReadLock";

  @Test
  void threeReadersOnOneNode_areThreeAcquisitionsThreeHoldersAndThreeLosses(@TempDir Path dir)
      throws Exception {
    CuratorFramework client = zk.newClient();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    new LockstepMetrics(client).bindTo(registry);
    String path = zk.path("shared");
    ReadWriteMutex lock = ReadWriteMutex.builder(client, path).localHandoff().build();
    Path file = dir.resolve("reads.jfr");
    List<LockHold> holds = new ArrayList<>();
    try (Recording recording = new Recording()) {
      recording.enable("io.lockstep.LockAcquire");
      recording.start();
      for (int i = 0; i < 3; i++) {
        holds.add(lock.readLock().hold());
      }
      recording.stop();
      recording.dump(file);
    }
    assertThat(client.getChildren().forPath(path)).as("one node for three readers").hasSize(1);
    assertThat(acquires(registry, "GRANTED")).isEqualTo(3);
    await().until(() -> registry.get(LockstepMetrics.HOLDERS).gauge().value() == 3);
    List<RecordedEvent> events =
        RecordingFile.readAllEvents(file).stream()
            .filter(event -> event.getEventType().getName().equals("io.lockstep.LockAcquire"))
            .toList();
    assertThat(events)
        .hasSize(3)
        .allSatisfy(
            event -> {
              assertThat(event.getString("recipe")).isEqualTo(READ);
              assertThat(event.getString("outcome")).isEqualTo("GRANTED");
            });

    zk.newClient().delete().forPath(path + "/" + client.getChildren().forPath(path).get(0));

    await().until(() -> counter(registry, LockstepMetrics.LOST) == 3);
    holds.forEach(LockHold::close);
    await().until(() -> registry.get(LockstepMetrics.HOLDERS).gauge().value() == 0);
  }

  private static long acquires(MeterRegistry registry, String outcome) {
    Timer timer =
        registry.find(LockstepMetrics.ACQUIRE).tags("recipe", READ, "outcome", outcome).timer();
    return timer == null ? 0 : timer.count();
  }

  private static double counter(MeterRegistry registry, String name) {
    Counter counter = registry.find(name).tags("recipe", READ).counter();
    return counter == null ? 0 : counter.count();
  }
}
