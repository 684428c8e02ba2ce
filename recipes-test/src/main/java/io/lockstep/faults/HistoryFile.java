package io.lockstep.faults;

import java.io.IOException;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Writes a run's record to a text file next to the children's logs, to read or replay by hand: one
 * line per fault, store decision and worker event, in time order, each stamped in milliseconds
 * since the workload began ({@code +12.345}) and in raw nanoseconds.
 */
final class HistoryFile {
  private HistoryFile() {}

  static void write(RunRecord record, Path file) throws IOException {
    try (Writer out = Files.newBufferedWriter(file)) {
      for (FaultRecord fault : record.faults()) {
        out.write(
            String.format(
                "fault %s %s target=%s start=%s healed=%s session=0x%x pastSession=%s%n",
                fault.kind(),
                fault.group(),
                fault.target(),
                stamp(record, fault.start()),
                stamp(record, fault.heal()),
                fault.session(),
                fault.pastSession()));
      }
      for (StoreService.Decision decision : record.decisions()) {
        if (!decision.accepted()) {
          out.write(
              String.format(
                  "refused %s worker=%d hold=%s %s token=%d%n",
                  stamp(record, decision.at()),
                  decision.worker(),
                  decision.holdKey(),
                  decision.resource(),
                  decision.token()));
        }
      }
      for (Event event : record.events()) {
        out.write(
            String.format(
                "%s w%d %s %s%n",
                stamp(record, event.at()),
                event.worker(),
                event.type(),
                String.join(" ", event.fields())));
      }
      for (NodeWatcher.Life life : record.nodes()) {
        out.write(
            String.format(
                "node %s session=0x%x appeared=%s lastSeen=%s vanished=%s%n",
                life.path(),
                life.session(),
                stamp(record, life.appeared()),
                stamp(record, life.lastSeen()),
                life.gone() ? stamp(record, life.vanished()) : "never"));
      }
    }
  }

  private static String stamp(RunRecord record, long nanos) {
    return String.format("%+.3f(%d)", (nanos - record.start()) / 1e9, nanos);
  }
}
