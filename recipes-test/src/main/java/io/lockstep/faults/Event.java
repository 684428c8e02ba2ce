package io.lockstep.faults;

import java.util.List;

/**
 * One line a worker reported: which worker, when (its {@code System.nanoTime()}, comparable across
 * the machine's processes), what ({@code granted}, {@code state}, {@code want}...) and the fields
 * that follow. {@link FaultWorker}'s roles say what each type's fields are.
 *
 * @param worker the worker's number
 * @param at when, in nanoseconds on the machine's monotonic clock
 * @param type the event's type
 * @param fields the fields after the stamp
 */
record Event(int worker, long at, String type, List<String> fields) {
  Event {
    fields = List.copyOf(fields);
  }

  /**
   * Parses {@code type nanos field...}; an {@code error}'s second field is the rest of the line.
   */
  static Event parse(int worker, String line) {
    String[] head = line.split(" ", 3);
    if (head.length < 2) {
      throw new IllegalArgumentException("not an event: " + line);
    }
    String rest = head.length == 3 ? head[2] : "";
    List<String> fields;
    if (head[0].equals("error")) {
      String[] parts = rest.split(" ", 2);
      fields = parts.length == 2 ? List.of(parts[0], parts[1]) : List.of(rest, "");
    } else {
      fields = rest.isEmpty() ? List.of() : List.of(rest.split(" "));
    }
    return new Event(worker, Long.parseLong(head[1]), head[0], fields);
  }

  String field(int index) {
    return fields.get(index);
  }

  long longField(int index) {
    return Long.parseLong(fields.get(index));
  }

  /** The thread that reported it, for the events that name one (all but the process's own). */
  String thread() {
    return fields.get(0);
  }

  /** Worker and thread: {@code 3/t1}. */
  String threadKey() {
    return worker + "/" + thread();
  }
}
