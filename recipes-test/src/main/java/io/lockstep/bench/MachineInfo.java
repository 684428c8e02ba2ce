package io.lockstep.bench;

import java.io.IOException;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import java.util.regex.Pattern;

/**
 * The machine and software a run was taken on, for the benchmark page.
 *
 * @param cpu the processor model, as the OS names it
 * @param cores processors available to the JVM
 * @param memoryGib physical memory, GiB
 * @param os operating system, version and architecture
 * @param jvm the Java runtime
 * @param zookeeper the server's version, from {@code mntr}
 * @param curator the Curator version on the class path
 */
record MachineInfo(
    String cpu,
    int cores,
    double memoryGib,
    String os,
    String jvm,
    String zookeeper,
    String curator) {

  private static final Pattern WHITESPACE = Pattern.compile("\\s+");

  static MachineInfo describe(ServerProbe probe) {
    return new MachineInfo(
        cpuModel(),
        Runtime.getRuntime().availableProcessors(),
        totalMemoryGib(),
        System.getProperty("os.name")
            + " "
            + System.getProperty("os.version")
            + " ("
            + System.getProperty("os.arch")
            + ")",
        System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"),
        probe.serverVersion(),
        curatorVersion());
  }

  /** The load averages over 1, 5 and 15 minutes, as the OS reports them, or "unknown". */
  static String loadAverage() {
    try {
      String[] fields = WHITESPACE.split(Files.readString(Path.of("/proc/loadavg")).trim(), -1);
      return fields[0] + " / " + fields[1] + " / " + fields[2];
    } catch (IOException | RuntimeException e) {
      double oneMinute = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
      return oneMinute < 0 ? "unknown" : String.format("%.2f (1 min)", oneMinute);
    }
  }

  private static String cpuModel() {
    try {
      return Files.readAllLines(Path.of("/proc/cpuinfo")).stream()
          .filter(line -> line.startsWith("model name"))
          .map(line -> line.substring(line.indexOf(':') + 1).trim())
          .findFirst()
          .orElse(System.getProperty("os.arch"));
    } catch (IOException e) {
      return System.getProperty("os.arch");
    }
  }

  private static double totalMemoryGib() {
    if (ManagementFactory.getOperatingSystemMXBean()
        instanceof com.sun.management.OperatingSystemMXBean os) {
      return os.getTotalMemorySize() / (1024.0 * 1024 * 1024);
    }
    return Double.NaN;
  }

  private static String curatorVersion() {
    String resource = "/META-INF/maven/org.apache.curator/curator-recipes/pom.properties";
    try (InputStream in = MachineInfo.class.getResourceAsStream(resource)) {
      if (in == null) {
        return "unknown";
      }
      Properties properties = new Properties();
      properties.load(in);
      return properties.getProperty("version", "unknown");
    } catch (IOException e) {
      return "unknown";
    }
  }
}
