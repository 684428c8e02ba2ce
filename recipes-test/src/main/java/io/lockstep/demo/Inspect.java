package io.lockstep.demo;

import io.lockstep.recipes.locks.LockInspector;
import io.lockstep.recipes.locks.LockInspector.Entry;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import org.apache.curator.framework.CuratorFramework;

/**
 * The {@code inspect} command: prints who holds and who waits for each lock path, as a table, from
 * any ensemble. Reads only; works for Lockstep's and Curator's lock nodes alike.
 *
 * <pre>
 * /locks/orders: 1 holder, 2 waiters
 *   role    mode   node                                            session             age     data
 *   holder  MUTEX  _c_2f0c...-lock-0000000041                      0x1000e3b3fd50003   12.4 s  10.0.0.7
 * </pre>
 */
final class Inspect {
  private static final int MAX_DATA = 40;

  private Inspect() {}

  /** The report's lines for each path, read through {@code client}. */
  static List<String> lines(CuratorFramework client, List<String> paths) {
    LockInspector inspector = new LockInspector(client);
    List<String> lines = new ArrayList<>();
    for (String path : paths) {
      LockInspector.Snapshot snapshot = inspector.inspect(path);
      int holders = snapshot.holders().size();
      int waiters = snapshot.waiters().size();
      if (holders + waiters == 0) {
        lines.add(path + ": not held, nobody waiting");
        continue;
      }
      lines.add(
          String.format(
              Locale.ROOT,
              "%s: %d holder%s, %d waiter%s",
              path,
              holders,
              holders == 1 ? "" : "s",
              waiters,
              waiters == 1 ? "" : "s"));
      Table table = new Table(List.of("role", "mode", "node", "session", "age", "data"), 4);
      snapshot.holders().forEach(entry -> table.row(row("holder", path, entry)));
      snapshot.waiters().forEach(entry -> table.row(row("waiter", path, entry)));
      lines.addAll(table.lines("  "));
    }
    return lines;
  }

  private static String[] row(String role, String path, Entry entry) {
    String node = entry.node();
    if (node.startsWith(path + "/")) {
      node = node.substring(path.length() + 1);
    }
    return new String[] {
      role,
      entry.mode().name(),
      node,
      entry.sessionId() == 0 ? "-" : "0x" + Long.toHexString(entry.sessionId()),
      age(entry.age()),
      data(entry.data())
    };
  }

  private static String age(Duration age) {
    long millis = age.toMillis();
    if (millis < 60_000) {
      return String.format(Locale.ROOT, "%.1f s", millis / 1e3);
    }
    if (millis < 3_600_000) {
      return String.format(Locale.ROOT, "%d min", millis / 60_000);
    }
    return String.format(Locale.ROOT, "%.1f h", millis / 3.6e6);
  }

  /** The node's data as text if it is printable UTF-8, else in hex; shortened if long. */
  static String data(byte[] data) {
    if (data.length == 0) {
      return "";
    }
    String text;
    try {
      text =
          StandardCharsets.UTF_8
              .newDecoder()
              .onMalformedInput(CodingErrorAction.REPORT)
              .onUnmappableCharacter(CodingErrorAction.REPORT)
              .decode(ByteBuffer.wrap(data))
              .toString();
      if (text.codePoints().anyMatch(Character::isISOControl)) {
        text = "0x" + HexFormat.of().formatHex(data);
      }
    } catch (CharacterCodingException e) {
      text = "0x" + HexFormat.of().formatHex(data);
    }
    return text.length() > MAX_DATA ? text.substring(0, MAX_DATA - 3) + "..." : text;
  }
}
