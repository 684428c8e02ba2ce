package io.lockstep.faults;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.curator.RetryPolicy;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.retry.RetryForever;
import org.apache.curator.utils.CloseableUtils;

/**
 * A worker process of the process fault suite: one JVM, one Curator client, one recipe and mode,
 * one or more threads that loop acquire, fenced write, release (or take leases, or take part in an
 * election), reporting every step to the test process over a loopback socket ({@link EventChannel})
 * and sending their writes to the fenced store there ({@link StoreChannel}). The test process
 * freezes it ({@code kill -STOP}), thaws it, kills it, and sends it commands on the event channel:
 *
 * <ul>
 *   <li>{@code expire}: expires the session on the client alone, as Curator's connection manager
 *       does after a long suspension ({@code ZooKeeper.getTestable().injectSessionExpiration()});
 *       the server keeps the session until its own timeout;
 *   <li>{@code quiesce}: the threads finish what they are doing and stop (the election is left);
 *       the client stays connected, and {@code quiet} is reported;
 *   <li>{@code stop}: closes the client, reports {@code bye} and exits.
 * </ul>
 *
 * <p>Arguments: {@code key=value} pairs ({@link WorkerSpec#encode()}). Started by {@link
 * ProcessFaultRun} on the test's class path, never by hand; the suite runs with
 *
 * <pre>
 * mvn -B -q verify -pl recipes-test -Dtest='ProcessFault*' -Dsurefire.failIfNoSpecifiedTests=false
 * mvn -B -pl recipes-test -Pprocess-faults verify -Dprocess-faults.minutes=N
 * </pre>
 *
 * (see docs/fault-suite.md).
 */
public final class FaultWorker {
  private FaultWorker() {}

  /** Runs the worker described by {@code args} until told to stop or the test process goes. */
  public static void main(String[] args) throws Exception {
    WorkerSpec spec = WorkerSpec.decode(args);
    EventChannel events = EventChannel.open(spec.hubPort(), spec.worker());
    StoreChannel store = StoreChannel.open(spec.hubPort(), spec.worker());
    events.send("hello", spec.worker(), ProcessHandle.current().pid());
    PauseMeter.start(events);
    CallWatch calls = CallWatch.start(events);
    CuratorFramework client = newClient(spec);
    client.start();
    if (!client.blockUntilConnected(30, TimeUnit.SECONDS)) {
      events.error("main", new IllegalStateException("not connected within 30 s"));
      Runtime.getRuntime().halt(4);
    }
    ConnectionWatch connection = new ConnectionWatch(events);
    client.getConnectionStateListenable().addListener(connection);
    connection.connected(client);
    RoleContext context =
        new RoleContext(
            spec, client, events, new FencedWrites(spec, client, events, store), connection, calls);
    List<Thread> threads = startRoles(context);
    events.send("ready");
    commands(context, threads);
  }

  private static CuratorFramework newClient(WorkerSpec spec) {
    RetryPolicy retry =
        spec.retryForever() ? new RetryForever(200) : new ExponentialBackoffRetry(100, 4, 1_000);
    return CuratorFrameworkFactory.builder()
        .connectString(spec.variant().connectString(spec.servers()))
        .namespace(spec.variant().namespace(spec.group()))
        .sessionTimeoutMs(Bounds.SESSION_TIMEOUT_MS)
        .connectionTimeoutMs(Bounds.CONNECTION_TIMEOUT_MS)
        .retryPolicy(retry)
        .build();
  }

  private static List<Thread> startRoles(RoleContext context) {
    List<Runnable> roles = new ArrayList<>();
    switch (context.spec.role()) {
      case ELECTION -> roles.add(new LeaderRole(context));
      case SEMAPHORE -> {
        for (int i = 0; i < context.spec.threads(); i++) {
          roles.add(new LeaseRole(context, i));
        }
      }
      default -> {
        for (int i = 0; i < context.spec.threads(); i++) {
          roles.add(new LockRole(context, i));
        }
      }
    }
    List<Thread> threads = new ArrayList<>();
    for (int i = 0; i < roles.size(); i++) {
      Thread thread = new Thread(roles.get(i), "role-" + i);
      thread.start();
      threads.add(thread);
    }
    return threads;
  }

  private static void commands(RoleContext context, List<Thread> threads) throws IOException {
    while (true) {
      String command = context.events.nextCommand();
      if (command == null) {
        Runtime.getRuntime().halt(3); // the test process is gone
        return;
      }
      switch (command) {
        case "expire" -> expire(context);
        case "quiesce" -> {
          context.quiesce();
          for (Thread thread : threads) {
            try {
              thread.join();
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
              return;
            }
          }
          context.events.send("quiet");
        }
        case "stop" -> {
          CloseableUtils.closeQuietly(context.client);
          context.events.send("bye");
          System.exit(0); // Curator and ZooKeeper leave threads behind
        }
        default -> context.events.error("main", new IllegalArgumentException(command));
      }
    }
  }

  private static void expire(RoleContext context) {
    try {
      long session = context.client.getZookeeperClient().getZooKeeper().getSessionId();
      context.client.getZookeeperClient().getZooKeeper().getTestable().injectSessionExpiration();
      context.events.send("expired", Long.toHexString(session));
    } catch (Exception e) {
      context.events.error("main", e);
    }
  }
}
