package io.lockstep.testkit.internal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.zookeeper.client.FourLetterWordMain;
import org.apache.zookeeper.common.X509Exception;

/**
 * Reads a ZooKeeper server's own counters through its four-letter commands: request counts, watch
 * counts, watched paths and ephemeral nodes, as the server sees them. The server must run with
 * {@code zookeeper.4lw.commands.whitelist=*}.
 */
public final class ServerStats {
  private static final Pattern CONNECTION =
      Pattern.compile("recved=(\\d+),sent=(\\d+),sid=0x([0-9a-f]+)");

  private final String host;
  private final int port;

  public ServerStats(String host, int port) {
    this.host = host;
    this.port = port;
  }

  /** Parses a connect string of one server, {@code host:port}. */
  public static ServerStats of(String connectString) {
    int colon = connectString.lastIndexOf(':');
    return new ServerStats(
        connectString.substring(0, colon), Integer.parseInt(connectString.substring(colon + 1)));
  }

  /** Sends a four-letter command and returns the answer. */
  public String command(String word) {
    try {
      return FourLetterWordMain.send4LetterWord(host, port, word);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (X509Exception.SSLContextException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The {@code mntr} figures, by name ({@code zk_packets_received}, {@code zk_watch_count}...). */
  public Map<String, String> monitor() {
    Map<String, String> values = new HashMap<>();
    for (String line : command("mntr").split("\n")) {
      String[] parts = line.split("\t", 2);
      if (parts.length == 2) {
        values.put(parts[0].trim(), parts[1].trim());
      }
    }
    return values;
  }

  /** One numeric {@code mntr} figure. */
  public long monitor(String name) {
    String value = monitor().get(name);
    if (value == null) {
      throw new IllegalStateException("mntr has no " + name);
    }
    return (long) Double.parseDouble(value);
  }

  /** Packets the server received on the connection of {@code sessionId} (requests and pings). */
  public long packetsReceived(long sessionId) {
    Matcher matcher = CONNECTION.matcher(command("cons"));
    while (matcher.find()) {
      if (Long.parseUnsignedLong(matcher.group(3), 16) == sessionId) {
        return Long.parseLong(matcher.group(1));
      }
    }
    throw new IllegalStateException("no connection of session 0x" + Long.toHexString(sessionId));
  }

  /** Watches by path: every watched path and the sessions watching it ({@code wchp}). */
  public Map<String, List<String>> watchesByPath() {
    Map<String, List<String>> watches = new HashMap<>();
    String current = null;
    for (String line : command("wchp").split("\n")) {
      if (line.isBlank()) {
        continue;
      }
      if (Character.isWhitespace(line.charAt(0))) {
        watches.get(current).add(line.trim());
      } else {
        current = line.trim();
        watches.put(current, new ArrayList<>());
      }
    }
    return watches;
  }

  /**
   * The paths one session watches, from {@code wchp}, leaving out ZooKeeper's own {@code
   * /zookeeper} tree (Curator's ensemble tracker watches {@code /zookeeper/config}).
   */
  public List<String> watchedPaths(long sessionId) {
    String session = "0x" + Long.toHexString(sessionId);
    List<String> paths = new ArrayList<>();
    watchesByPath()
        .forEach(
            (path, sessions) -> {
              if (sessions.contains(session) && !path.startsWith("/zookeeper")) {
                paths.add(path);
              }
            });
    return paths;
  }

  /** The paths of all ephemeral nodes, from {@code dump}. */
  public List<String> ephemeralNodes() {
    List<String> nodes = new ArrayList<>();
    for (String line : command("dump").split("\n")) {
      String trimmed = line.trim();
      if (line.startsWith("\t") && trimmed.startsWith("/")) {
        nodes.add(trimmed);
      }
    }
    return nodes;
  }
}
