package io.lockstep.demo;

import java.util.ArrayList;
import java.util.List;

/**
 * A plain-text table: a header row and rows of cells, each column as wide as its widest cell.
 * Columns listed in {@code rightAligned} are aligned right (figures), the others left.
 */
final class Table {
  private final List<String> header;
  private final boolean[] right;
  private final List<List<String>> rows = new ArrayList<>();

  Table(List<String> header, int... rightAligned) {
    this.header = List.copyOf(header);
    this.right = new boolean[header.size()];
    for (int column : rightAligned) {
      right[column] = true;
    }
  }

  /** Adds a row; missing trailing cells are left empty. */
  Table row(String... cells) {
    rows.add(List.of(cells));
    return this;
  }

  /** The table's lines, each starting with {@code indent}. */
  List<String> lines(String indent) {
    int[] widths = new int[header.size()];
    List<List<String>> all = new ArrayList<>();
    all.add(header);
    all.addAll(rows);
    for (List<String> row : all) {
      for (int i = 0; i < row.size(); i++) {
        widths[i] = Math.max(widths[i], row.get(i).length());
      }
    }
    List<String> lines = new ArrayList<>();
    for (List<String> row : all) {
      StringBuilder line = new StringBuilder(indent);
      for (int i = 0; i < widths.length; i++) {
        String cell = i < row.size() ? row.get(i) : "";
        String padding = " ".repeat(widths[i] - cell.length());
        line.append(right[i] ? padding + cell : cell + padding);
        if (i < widths.length - 1) {
          line.append("  ");
        }
      }
      lines.add(line.toString().stripTrailing());
    }
    return lines;
  }
}
