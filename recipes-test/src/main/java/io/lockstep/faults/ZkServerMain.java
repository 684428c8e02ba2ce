package io.lockstep.faults;

import java.io.IOException;
import java.io.InputStream;
import org.apache.zookeeper.server.quorum.QuorumPeerMain;

/**
 * A ZooKeeper server of the process fault suite, in a JVM of its own: ZooKeeper's {@code
 * QuorumPeerMain} on the generated config file given as the only argument (a standalone server, or
 * one of an ensemble), which exits as soon as its standard input closes, so that a server never
 * outlives the test process that started it. Started by {@link ZkServers}, never by hand; the suite
 * that uses it runs with {@code mvn -B -q verify -pl recipes-test -Dtest='ProcessFault*'
 * -Dsurefire.failIfNoSpecifiedTests=false} (see docs/fault-suite.md).
 */
public final class ZkServerMain {
  private ZkServerMain() {}

  /** Runs the server of the config file {@code args[0]}. */
  public static void main(String[] args) {
    Thread watchdog =
        new Thread(
            () -> {
              try (InputStream in = System.in) {
                while (in.read() >= 0) {
                  // nothing is ever sent: wait for the end of the stream
                }
              } catch (IOException ignored) {
                // the pipe broke: the parent is gone too
              }
              Runtime.getRuntime().halt(0);
            },
            "parent-watchdog");
    watchdog.setDaemon(true);
    watchdog.start();
    QuorumPeerMain.main(args);
  }
}
