package io.lockstep.recipes.locks;

import io.lockstep.recipes.internal.queue.NodeNames;
import io.lockstep.recipes.internal.queue.Slot;
import io.lockstep.recipes.internal.zk.NodeCreates;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.client.ConnectStringParser;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.proto.CreateRequest;

/**
 * Refuses, before anything is sent, an enqueuing transaction larger than ZooKeeper accepts: the
 * server drops a request over {@code jute.maxbuffer} and closes the connection, which a client
 * would retry forever.
 */
final class EnqueueLimits {
  /** ZooKeeper's default {@code jute.maxbuffer}: one byte short of 1 MiB. */
  private static final int DEFAULT_MAX_BUFFER = 0xfffff;

  /** A multi header (type, done, error) per operation, plus the closing one. */
  private static final int MULTI_HEADER_BYTES = 4 + 1 + 4;

  /** The request header (xid, type) and the length prefix of the packet. */
  private static final int PACKET_OVERHEAD_BYTES = 4 + 4 + 4;

  private EnqueueLimits() {}

  /**
   * {@link #check}, as a task that checks until it passes once: a lock whose client was not started
   * when it was made runs it before each attempt until then.
   */
  static Runnable checkOnce(CuratorFramework client, List<Slot> slots, String argument) {
    return new Runnable() {
      private volatile boolean passed;

      @Override
      public void run() {
        if (!passed) {
          check(client, slots, argument);
          passed = true;
        }
      }
    };
  }

  /**
   * Throws {@link IllegalArgumentException} naming {@code argument} if one transaction creating a
   * node in every slot would exceed the client's {@code jute.maxbuffer}.
   */
  static void check(CuratorFramework client, List<Slot> slots, String argument) {
    String sampleId = NodeNames.newProtectionId();
    int chroot = chrootBytes(client); // ZooKeeper's client puts it before every path it sends
    long bytes = PACKET_OVERHEAD_BYTES + MULTI_HEADER_BYTES;
    for (Slot slot : slots) {
      bytes +=
          MULTI_HEADER_BYTES
              + size(NodeCreates.resolveCreate(client, slot, sampleId))
              + chroot
              + 10; // + sequence
    }
    int limit = Integer.getInteger("jute.maxbuffer", DEFAULT_MAX_BUFFER);
    if (bytes > limit) {
      throw new IllegalArgumentException(
          argument
              + ": creating "
              + slots.size()
              + " lock nodes in one transaction takes about "
              + bytes
              + " bytes, more than ZooKeeper accepts (jute.maxbuffer = "
              + limit
              + ")");
    }
  }

  /** The length of the chroot in the client's connect string, or 0 for none. */
  private static int chrootBytes(CuratorFramework client) {
    String connectString = client.getZookeeperClient().getCurrentConnectionString();
    String chroot =
        connectString == null ? null : new ConnectStringParser(connectString).getChrootPath();
    return chroot == null ? 0 : chroot.getBytes(StandardCharsets.UTF_8).length;
  }

  private static long size(CreateRequest request) {
    long bytes =
        string(request.getPath()) + 4L + (request.getData() == null ? 0 : request.getData().length);
    bytes += 4; // ACL count
    for (ACL acl : request.getAcl()) {
      bytes += 4 + string(acl.getId().getScheme()) + string(acl.getId().getId());
    }
    return bytes + 4; // flags
  }

  private static long string(String value) {
    return 4L + value.getBytes(StandardCharsets.UTF_8).length;
  }
}
