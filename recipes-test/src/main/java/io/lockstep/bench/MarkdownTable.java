package io.lockstep.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/** A Markdown table, built row by row: {@code | a | b |}, then {@code |---|---:|}, then rows. */
final class MarkdownTable {
  private final List<String> header;
  private final Set<Integer> rightAligned = new HashSet<>();
  private final List<List<String>> rows = new ArrayList<>();

  MarkdownTable(String... header) {
    this.header = List.of(header);
  }

  /** Aligns the given columns (from 0) to the right, as figures are. */
  void alignRight(int... columns) {
    Arrays.stream(columns).forEach(rightAligned::add);
  }

  /**
   * Adds a row.
   *
   * @throws IllegalArgumentException if it has not one cell per column
   */
  void row(String... cells) {
    if (cells.length != header.size()) {
      throw new IllegalArgumentException(
          cells.length + " cells for " + header.size() + " columns: " + Arrays.toString(cells));
    }
    rows.add(List.of(cells));
  }

  /** Whether no row was added. */
  boolean isEmpty() {
    return rows.isEmpty();
  }

  /** The table's lines, each ending in a newline. */
  String render() {
    StringBuilder table = new StringBuilder(line(header));
    table.append('|');
    for (int i = 0; i < header.size(); i++) {
      table.append(rightAligned.contains(i) ? "---:" : "---").append('|');
    }
    table.append('\n');
    rows.forEach(row -> table.append(line(row)));
    return table.toString();
  }

  private static String line(List<String> cells) {
    StringBuilder line = new StringBuilder("|");
    for (String cell : cells) {
      line.append(cell.isEmpty() ? " " : " " + cell + " ").append('|');
    }
    return line.append('\n').toString();
  }
}
