package io.lockstep.bench;

/** The two implementations every benchmark row compares: Curator's lock recipes and ours. */
public enum Library {
  /** Apache Curator's recipes ({@code org.apache.curator.framework.recipes.locks}). */
  CURATOR("Curator"),
  /** Lockstep's recipes ({@code io.lockstep.recipes.locks}). */
  LOCKSTEP("Lockstep");

  private final String label;

  Library(String label) {
    this.label = label;
  }

  /** The name shown in tables and charts. */
  public String label() {
    return label;
  }
}
