package io.lockstep.demo;

/** The kinds of work the demo's service instances do, each under its own kind of lock. */
enum Operation {
  /** Moves money between two accounts, holding both. */
  TRANSFER("transfer"),
  /** Reads every balance and checks that the sum is what the bank opened with. */
  AUDIT("audit"),
  /** Reads one account's balance under the read side of its audit lock. */
  BALANCE("balance"),
  /** Sets part of one account's money aside, holding that account. */
  RESERVE("reserve"),
  /** Returns one account's reserved money, holding that account. */
  SETTLE("settle");

  private final String label;

  Operation(String label) {
    this.label = label;
  }

  /** The operation's name as printed. */
  String label() {
    return label;
  }
}
