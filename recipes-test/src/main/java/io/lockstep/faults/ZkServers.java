package io.lockstep.faults;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import org.apache.zookeeper.client.FourLetterWordMain;
import org.apache.zookeeper.common.X509Exception;
import org.awaitility.Awaitility;

/**
 * The ZooKeeper servers of a run, each in a child JVM ({@link ZkServerMain}) on a generated config:
 * one standalone server, or a three-server ensemble. Ticks of {@value Bounds#TICK_MS} ms (sessions
 * of 1 to 30 s), no fsync, every four-letter command allowed, no admin server. Servers are found,
 * frozen, thawed, killed and restarted by the run's faults; the ensemble's leader is the server
 * whose {@code srvr} says {@code Mode: leader}.
 */
final class ZkServers implements AutoCloseable {
  private static final List<String> JVM_OPTIONS =
      List.of(
          "-Xmx160m",
          "-XX:+UseSerialGC",
          "-XX:TieredStopAtLevel=1",
          "-XX:-UsePerfData",
          "-Dzookeeper.4lw.commands.whitelist=*",
          "-Dzookeeper.admin.enableServer=false",
          "-Dzookeeper.forceSync=no",
          "-Dorg.slf4j.simpleLogger.showDateTime=true",
          "-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS");

  /** One server: its ports and files. */
  record Server(int id, int clientPort, int quorumPort, int electionPort, Path config) {
    String address() {
      return "127.0.0.1:" + clientPort;
    }

    String name() {
      return "zk" + id;
    }
  }

  private final ChildProcesses children;
  private final List<Server> servers;
  private final Map<Integer, ChildProcesses.Child> running = new ConcurrentHashMap<>();

  private ZkServers(ChildProcesses children, List<Server> servers) {
    this.children = children;
    this.servers = List.copyOf(servers);
  }

  /**
   * Writes the configs of {@code count} servers (1, or 3 for an ensemble) under {@code dir}, starts
   * them and waits until every one serves.
   */
  static ZkServers start(ChildProcesses children, Path dir, int count)
      throws IOException, InterruptedException {
    int[] ports = freePorts(count * 3);
    List<Server> servers = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      Path data = Files.createDirectories(dir.resolve("zk" + (i + 1)));
      servers.add(
          new Server(
              i + 1, ports[i * 3], ports[i * 3 + 1], ports[i * 3 + 2], data.resolve("zoo.cfg")));
    }
    for (Server server : servers) {
      writeConfig(server, servers);
    }
    ZkServers zk = new ZkServers(children, servers);
    for (Server server : servers) {
      zk.launch(server);
    }
    zk.awaitServing(Duration.ofSeconds(60));
    return zk;
  }

  private static void writeConfig(Server server, List<Server> all) throws IOException {
    Path dataDir = server.config().getParent();
    List<String> lines = new ArrayList<>();
    lines.add("tickTime=" + Bounds.TICK_MS);
    lines.add("initLimit=10");
    lines.add("syncLimit=4");
    lines.add("dataDir=" + dataDir);
    lines.add("clientPort=" + server.clientPort());
    lines.add("clientPortAddress=127.0.0.1");
    lines.add("maxClientCnxns=0");
    lines.add("minSessionTimeout=" + 2 * Bounds.TICK_MS);
    lines.add("maxSessionTimeout=30000");
    lines.add("4lw.commands.whitelist=*");
    lines.add("admin.enableServer=false");
    lines.add("reconfigEnabled=false");
    if (all.size() > 1) {
      for (Server peer : all) {
        lines.add(
            "server." + peer.id() + "=127.0.0.1:" + peer.quorumPort() + ":" + peer.electionPort());
      }
      Files.writeString(dataDir.resolve("myid"), server.id() + "\n");
    }
    Files.write(server.config(), lines);
  }

  private void launch(Server server) throws IOException {
    running.put(
        server.id(),
        children.start(
            server.name(),
            JVM_OPTIONS,
            ZkServerMain.class.getName(),
            List.of(server.config().toString())));
  }

  /** The servers' connect string, without chroot. */
  String connectString() {
    return servers.stream().map(Server::address).collect(Collectors.joining(","));
  }

  List<Server> servers() {
    return servers;
  }

  /** Waits until every running server answers {@code srvr} with its mode. */
  void awaitServing(Duration atMost) {
    Awaitility.await("ZooKeeper serving")
        .atMost(atMost)
        .pollInterval(Duration.ofMillis(100))
        .until(() -> running.keySet().stream().allMatch(id -> serving(servers.get(id - 1))));
  }

  /** Whether {@code server} answers {@code srvr} with a mode (it serves clients). */
  boolean serving(Server server) {
    return fourLetter(server, "srvr", 500).contains("Mode: ");
  }

  /** The server that leads (the standalone server of a one-server run). */
  Optional<Server> leader() {
    for (Server server : servers) {
      String mode = fourLetter(server, "srvr", 500);
      if (mode.contains("Mode: leader") || mode.contains("Mode: standalone")) {
        return Optional.of(server);
      }
    }
    return Optional.empty();
  }

  /** The JVM of {@code server} now. */
  ChildProcesses.Child child(Server server) {
    return running.get(server.id());
  }

  void freeze(Server server) {
    children.freeze(child(server));
  }

  void thaw(Server server) {
    children.thaw(child(server));
  }

  /** Kills the server's JVM at once ({@code SIGKILL}). */
  void kill(Server server) throws InterruptedException {
    children.kill(child(server));
  }

  /** Starts the server again on its config and data, and waits until it serves. */
  void restart(Server server, Duration atMost) throws IOException {
    launch(server);
    Awaitility.await(server.name() + " serving again")
        .atMost(atMost)
        .pollInterval(Duration.ofMillis(50))
        .until(() -> serving(server));
  }

  /**
   * A four-letter command's answer, or "" if the server did not answer within {@code timeoutMs}.
   */
  static String fourLetter(Server server, String word, int timeoutMs) {
    try {
      return FourLetterWordMain.send4LetterWord(
          "127.0.0.1", server.clientPort(), word, false, timeoutMs);
    } catch (IOException | X509Exception.SSLContextException | RuntimeException e) {
      return "";
    }
  }

  private static int[] freePorts(int count) throws IOException {
    List<ServerSocket> sockets = new ArrayList<>();
    try {
      int[] ports = new int[count];
      for (int i = 0; i < count; i++) {
        ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        sockets.add(socket);
        ports[i] = socket.getLocalPort();
      }
      return ports;
    } finally {
      for (ServerSocket socket : sockets) {
        socket.close();
      }
    }
  }

  @Override
  public void close() {
    for (ChildProcesses.Child child : running.values()) {
      if (child.alive()) {
        children.thaw(child);
        child.process().destroyForcibly();
      }
    }
  }
}
