package io.lockstep.bench;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.testkit.internal.ServerStats;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A busy server may answer {@code mntr} without its counters; the probe reads again rather than
 * ending a benchmark run that took hours (one such answer once ended a full run in its last
 * section). Against a stand-in that answers the four-letter words as a server does.
 */
@Timeout(30)
class ServerProbeTest {
  private static final String NOT_SERVING =
      "This ZooKeeper instance is not currently serving requests\n";
  private static final String MNTR =
      String.join(
          "\n",
          "zk_version\t3.9.5",
          "zk_packets_received\t42",
          "zk_cnt_updatelatency\t7",
          "zk_cnt_readlatency\t9",
          "zk_response_bytes\t1000",
          "zk_sum_node_deleted_watch_count\t1",
          "zk_sum_node_children_watch_count\t2",
          "zk_sum_node_changed_watch_count\t3",
          "zk_max_node_deleted_watch_count\t1",
          "");

  @Test
  void anAnswerWithoutCounters_isReadAgain_andCountedAsAProbeRead() throws Exception {
    try (StandIn server = new StandIn(2)) {
      ServerCounters counters = new ServerProbe(server.stats()).read();

      assertThat(counters.packetsReceived()).isEqualTo(42);
      assertThat(counters.probeReads()).as("both answers were packets").isEqualTo(2);
      assertThat(server.answered.get()).isEqualTo(2);
    }
  }

  @Test
  void aServerThatNeverAnswersWithCounters_failsTheRunAfterFiveReads() throws Exception {
    try (StandIn server = new StandIn(Integer.MAX_VALUE)) {
      ServerProbe probe = new ServerProbe(server.stats());

      assertThatThrownBy(probe::read)
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("zk_packets_received");
      assertThat(server.answered.get()).isEqualTo(5);
    }
  }

  /** Answers "not serving" until its {@code notServing} answers are spent, then {@code mntr}. */
  private static final class StandIn implements AutoCloseable {
    final ServerSocket socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    final AtomicInteger answered = new AtomicInteger();
    final Thread thread;

    StandIn(int notServing) throws IOException {
      thread =
          new Thread(
              () -> {
                while (!socket.isClosed()) {
                  try (Socket client = socket.accept()) {
                    InputStream in = client.getInputStream();
                    in.readNBytes(4); // the four-letter word
                    int answer = answered.incrementAndGet();
                    OutputStream out = client.getOutputStream();
                    out.write((answer < notServing ? NOT_SERVING : MNTR).getBytes(UTF_8));
                    out.flush();
                  } catch (IOException closed) {
                    return;
                  }
                }
              },
              "mntr-stand-in");
      thread.setDaemon(true);
      thread.start();
    }

    ServerStats stats() {
      return new ServerStats("127.0.0.1", socket.getLocalPort());
    }

    @Override
    public void close() throws Exception {
      socket.close();
      thread.join(5_000);
    }
  }
}
