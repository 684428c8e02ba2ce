package io.lockstep.faults;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;

/** Runs a run, prints its report and keeps it in {@code target/} next to the children's logs. */
final class RunReports {
  private RunReports() {}

  /** The seed asked for ({@code -Dprocess-faults.seed}), or a fresh one, printed. */
  static long seed() {
    String asked = System.getProperty("process-faults.seed", "");
    long seed = asked.isBlank() ? System.nanoTime() : Long.parseLong(asked.trim());
    System.out.println(
        "process faults seed " + seed + " (replay with -Dprocess-faults.seed=" + seed + ")");
    return seed;
  }

  /** A fresh directory for one run under {@code target/process-faults}. */
  static Path directory(String name) throws IOException {
    String stamp = LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss-SSS"));
    return Files.createDirectories(Path.of("target", "process-faults", name + "-" + stamp));
  }

  /** Runs {@code config}, prints the summary and writes it to {@code summary.txt}. */
  static RunReport run(ProcessFaultRun.Config config) throws Exception {
    RunReport report;
    try (ProcessFaultRun run = new ProcessFaultRun(config)) {
      report = run.run();
    }
    report.summary().forEach(System.out::println);
    Files.write(config.directory().resolve("summary.txt"), report.summary());
    return report;
  }
}
