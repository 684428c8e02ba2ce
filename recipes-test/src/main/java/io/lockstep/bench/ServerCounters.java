package io.lockstep.bench;

import java.util.Map;

/**
 * One reading of the server-wide {@code mntr} counters the benchmarks use. ZooKeeper 3.9.3 reports
 * them as {@code zk_packets_received} (every request and ping, and each four-letter command),
 * {@code zk_response_bytes} (bytes of responses and notifications sent to clients), and, per kind
 * of watch event, the summaries {@code zk_sum_node_deleted_watch_count} and {@code
 * zk_sum_node_children_watch_count} (watchers notified, summed over events) with their maxima, and
 * the numbers of writes and reads processed, as the counts of the latency summaries {@code
 * zk_cnt_updatelatency} and {@code zk_cnt_readlatency}. {@code srst} resets all of them.
 *
 * @param packetsReceived {@code zk_packets_received}
 * @param writes {@code zk_cnt_updatelatency}: write requests processed (a transaction is one)
 * @param reads {@code zk_cnt_readlatency}: read requests processed
 * @param responseBytes {@code zk_response_bytes}
 * @param deletedWatchesFired {@code zk_sum_node_deleted_watch_count}: data watches fired by deletes
 * @param childWatchesFired {@code zk_sum_node_children_watch_count}: child watches fired
 * @param changedWatchesFired {@code zk_sum_node_changed_watch_count}: data watches fired by writes
 * @param maxDeletedWatches {@code zk_max_node_deleted_watch_count}: most watchers one delete woke
 * @param probeReads how many {@code mntr} reads the probe had made when this one was taken
 */
public record ServerCounters(
    long packetsReceived,
    long writes,
    long reads,
    long responseBytes,
    long deletedWatchesFired,
    long childWatchesFired,
    long changedWatchesFired,
    long maxDeletedWatches,
    long probeReads) {

  /** The {@code mntr} figure of the packets the server received: in every full answer. */
  static final String REQUESTS = "zk_packets_received";

  static ServerCounters of(Map<String, String> mntr, long probeReads) {
    return new ServerCounters(
        value(mntr, REQUESTS),
        value(mntr, "zk_cnt_updatelatency"),
        value(mntr, "zk_cnt_readlatency"),
        value(mntr, "zk_response_bytes"),
        value(mntr, "zk_sum_node_deleted_watch_count"),
        value(mntr, "zk_sum_node_children_watch_count"),
        value(mntr, "zk_sum_node_changed_watch_count"),
        value(mntr, "zk_max_node_deleted_watch_count"),
        probeReads);
  }

  private static long value(Map<String, String> mntr, String key) {
    String value = mntr.get(key);
    if (value == null) {
      throw new IllegalStateException("the server's mntr has no " + key);
    }
    return (long) Double.parseDouble(value);
  }

  /**
   * The traffic between an earlier reading and this one. Each {@code mntr} read arrives as one
   * packet: the probe's own reads in between are taken out of the request count.
   */
  public Traffic since(ServerCounters earlier) {
    return new Traffic(
        packetsReceived - earlier.packetsReceived - (probeReads - earlier.probeReads),
        writes - earlier.writes,
        reads - earlier.reads,
        responseBytes - earlier.responseBytes,
        deletedWatchesFired - earlier.deletedWatchesFired,
        childWatchesFired - earlier.childWatchesFired,
        changedWatchesFired - earlier.changedWatchesFired);
  }

  /**
   * ZooKeeper traffic over a period, as the server counted it.
   *
   * @param requests packets received from clients (requests, and pings if a session idled)
   * @param writes write requests among them
   * @param reads read requests among them
   * @param responseBytes bytes sent to clients
   * @param deletedWatchesFired data watches fired by deletes
   * @param childWatchesFired child watches fired by creates and deletes
   * @param changedWatchesFired data watches fired by writes
   */
  public record Traffic(
      long requests,
      long writes,
      long reads,
      long responseBytes,
      long deletedWatchesFired,
      long childWatchesFired,
      long changedWatchesFired) {

    /** All watch notifications. */
    public long watchesFired() {
      return deletedWatchesFired + childWatchesFired + changedWatchesFired;
    }
  }
}
