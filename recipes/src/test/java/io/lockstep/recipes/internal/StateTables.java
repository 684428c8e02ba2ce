package io.lockstep.recipes.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.provider.Arguments;

/**
 * The state tables of the engine's state owners, written as text in their tests: a header line of
 * column (event) names, then one line per row (phase or situation) with its cells, separated by
 * white space. Each cell becomes one parameterized test.
 */
public final class StateTables {
  private StateTables() {}

  /** The cells of {@code table}: (row, column, expected cell text) each. */
  public static <R extends Enum<R>, C extends Enum<C>> Stream<Arguments> cells(
      String table, Class<R> rows, Class<C> columns) {
    List<String> lines = table.lines().filter(line -> !line.isBlank()).toList();
    String[] header = lines.get(0).trim().split("\\s+", -1);
    List<Arguments> cells = new ArrayList<>();
    for (String line : lines.subList(1, lines.size())) {
      String[] row = line.trim().split("\\s+", -1);
      assertThat(row).as("cells of row %s", row[0]).hasSameSizeAs(header);
      for (int i = 1; i < header.length; i++) {
        cells.add(
            Arguments.of(Enum.valueOf(rows, row[0]), Enum.valueOf(columns, header[i]), row[i]));
      }
    }
    return cells.stream();
  }

  /** Checks that {@code table} has a cell for every row and every column, in declaration order. */
  public static <R extends Enum<R>, C extends Enum<C>> void assertComplete(
      String table, Class<R> rows, Class<C> columns) {
    Map<Object, List<Object>> seen = new LinkedHashMap<>();
    cells(table, rows, columns)
        .forEach(a -> seen.computeIfAbsent(a.get()[0], r -> new ArrayList<>()).add(a.get()[1]));
    assertThat(seen.keySet()).containsExactly((Object[]) rows.getEnumConstants());
    seen.values()
        .forEach(cells -> assertThat(cells).containsExactly((Object[]) columns.getEnumConstants()));
  }

  /**
   * A cell's text for what an event did: "-" for no step, else the steps' simple class names joined
   * by "+", a slash and the phase after them.
   */
  public static String outcome(List<?> steps, Object phase) {
    if (steps.isEmpty()) {
      return "-";
    }
    StringBuilder text = new StringBuilder();
    for (Object step : steps) {
      text.append(text.length() == 0 ? "" : "+").append(step.getClass().getSimpleName());
    }
    return text.append('/').append(phase).toString();
  }
}
