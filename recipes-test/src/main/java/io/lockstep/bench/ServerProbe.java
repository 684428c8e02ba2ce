package io.lockstep.bench;

import io.lockstep.testkit.internal.ServerStats;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * Reads a server's {@code mntr} counters for the benchmarks, and knows how many reads it made
 * itself so that they are not counted as client requests. The server must run with {@code
 * zookeeper.4lw.commands.whitelist=*}.
 */
public final class ServerProbe {
  private static final Duration SETTLE_TIMEOUT = Duration.ofSeconds(20);
  private static final long SETTLE_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(30);
  private static final int READ_ATTEMPTS = 5;
  private static final long READ_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

  private final ServerStats stats;
  private final AtomicLong reads = new AtomicLong();

  public ServerProbe(ServerStats stats) {
    this.stats = stats;
  }

  /** A probe of the server at {@code host:port}. */
  public static ServerProbe of(String connectString) {
    return new ServerProbe(ServerStats.of(connectString));
  }

  /**
   * Reads the counters now. A busy server sometimes answers {@code mntr} without them ("not
   * currently serving requests"): such an answer is read again, a few times, before the run fails.
   */
  public ServerCounters read() {
    for (int attempt = 1; ; attempt++) {
      var mntr = stats.monitor();
      long probeReads = reads.incrementAndGet(); // an answer without counters was a packet too
      if (mntr.containsKey(ServerCounters.REQUESTS) || attempt == READ_ATTEMPTS) {
        return ServerCounters.of(mntr, probeReads);
      }
      LockSupport.parkNanos(READ_RETRY_NANOS);
    }
  }

  /**
   * Reads the counters once the server has stopped receiving and sending client traffic: two reads
   * a poll apart between which only the probe's own read arrived. Use it to fence a measured
   * period, so that requests still in flight are counted on the right side.
   *
   * @throws IllegalStateException if the traffic does not stop within 20 seconds
   */
  public ServerCounters settled() {
    long deadline = System.nanoTime() + SETTLE_TIMEOUT.toNanos();
    ServerCounters previous = read();
    while (true) {
      LockSupport.parkNanos(SETTLE_POLL_NANOS);
      ServerCounters current = read();
      if (current.since(previous).requests() == 0
          && current.responseBytes() == previous.responseBytes()) {
        return current;
      }
      if (System.nanoTime() - deadline > 0) {
        throw new IllegalStateException(
            "ZooKeeper traffic did not settle within " + SETTLE_TIMEOUT);
      }
      previous = current;
    }
  }

  /**
   * Resets the server's statistics ({@code srst}), so that maxima such as {@link
   * ServerCounters#maxDeletedWatches()} cover what follows. Counters read before the reset cannot
   * be compared with counters read after it.
   */
  public void resetStatistics() {
    stats.command("srst");
  }

  /** The server's {@code zk_version}. */
  public String serverVersion() {
    String version = stats.monitor().getOrDefault("zk_version", "unknown");
    int comma = version.indexOf(',');
    return comma < 0 ? version : version.substring(0, comma);
  }

  /**
   * All of the server's {@code mntr} figures now, by name, counted as one of the probe's own reads
   * (so {@link ServerCounters#since} leaves it out).
   */
  public Map<String, String> monitor() {
    reads.incrementAndGet();
    return stats.monitor();
  }

  /** The server's current watch count ({@code zk_watch_count}). */
  public long watchCount() {
    return stats.monitor("zk_watch_count");
  }
}
