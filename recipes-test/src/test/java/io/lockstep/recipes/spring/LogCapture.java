package io.lockstep.recipes.spring;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.stream.Stream;

/**
 * The log lines written while it is open, in slf4j-simple's form ({@code HH:mm:ss.SSS [thread]
 * LEVEL logger - message}): those of slf4j-simple, the tests' SLF4J binding, which looks {@code
 * System.err} up at each line; and those of java.util.logging, where Spring's own logging goes here
 * (as {@code [jul] ERROR logger - message} for SEVERE, {@code WARN} for WARNING). The lines still
 * reach the console.
 */
final class LogCapture implements AutoCloseable {
  private final PrintStream original = System.err;
  private final ByteArrayOutputStream captured = new ByteArrayOutputStream();
  private final List<String> julLines = new CopyOnWriteArrayList<>();
  private final Logger julRoot = Logger.getLogger("");
  private final Handler julHandler =
      new Handler() {
        @Override
        public void publish(LogRecord record) {
          String level =
              record.getLevel().intValue() >= Level.SEVERE.intValue()
                  ? "ERROR"
                  : record.getLevel().intValue() >= Level.WARNING.intValue() ? "WARN" : "INFO";
          julLines.add(
              "[jul] "
                  + level
                  + " "
                  + record.getLoggerName()
                  + " - "
                  + record.getMessage()
                  + (record.getThrown() == null ? "" : " " + record.getThrown()));
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
      };

  LogCapture() {
    OutputStream tee =
        new OutputStream() {
          @Override
          public void write(int b) {
            original.write(b);
            captured.write(b);
          }

          @Override
          public void write(byte[] bytes, int offset, int length) {
            original.write(bytes, offset, length);
            captured.write(bytes, offset, length);
          }

          @Override
          public void flush() {
            original.flush();
          }
        };
    System.setErr(new PrintStream(tee, true, UTF_8));
    julHandler.setLevel(Level.INFO);
    julRoot.addHandler(julHandler);
  }

  /** The lines so far. */
  List<String> lines() {
    return Stream.concat(captured.toString(UTF_8).lines(), julLines.stream()).toList();
  }

  /** The lines so far at {@code level} ({@code "ERROR"}, {@code "WARN"}, {@code "DEBUG"}). */
  List<String> at(String level) {
    return lines().stream().filter(line -> line.contains("] " + level + " ")).toList();
  }

  @Override
  public void close() {
    julRoot.removeHandler(julHandler);
    System.err.flush();
    System.setErr(original);
  }
}
