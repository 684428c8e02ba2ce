package io.lockstep.recipes.locks;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.testing.ZooKeeperExtension;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The first timed acquire in a JVM spends nothing of its budget on starting the Flight Recorder:
 * Lockstep's event types are registered when a client's first recipe object is made (on a cold JVM,
 * the recorder's metadata takes a few hundred milliseconds to start, which once came out of the
 * first timed acquire's budget). Checked in a JVM of its own, where nothing registered them before.
 */
@Timeout(60)
class FirstTimedCallTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  private static final String EVENT = "io.lockstep.LockAcquire";

  @Test
  void theFlightRecordersEventTypes_areRegisteredByTheFirstRecipeObject_notByAnAcquire()
      throws Exception {
    List<String> command =
        List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-cp",
            System.getProperty("java.class.path"),
            Probe.class.getName(),
            zk.server().getConnectString(),
            zk.path("lock"));
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    String output = new String(process.getInputStream().readAllBytes(), UTF_8);
    assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();

    assertThat(process.exitValue()).as(output).isZero();
    assertThat(output)
        .as(output)
        .contains("client started: false")
        .contains("lock object made: true")
        .contains("acquired: true");
  }

  /** The child JVM: whether the event types are registered at each step, before any acquire. */
  static final class Probe {
    private Probe() {}

    public static void main(String[] args) throws Exception {
      try (CuratorFramework client =
          CuratorFrameworkFactory.newClient(args[0], new RetryOneTime(100))) {
        client.start();
        client.blockUntilConnected();
        System.out.println("client started: " + registered());
        ReentrantMutex lock = new ReentrantMutex(client, args[1]);
        System.out.println("lock object made: " + registered());
        boolean acquired = lock.acquire(10, TimeUnit.SECONDS);
        System.out.println("acquired: " + acquired);
        lock.release();
      }
    }

    private static boolean registered() {
      return jdk.jfr.FlightRecorder.getFlightRecorder().getEventTypes().stream()
          .anyMatch(type -> type.getName().equals(EVENT));
    }
  }
}
