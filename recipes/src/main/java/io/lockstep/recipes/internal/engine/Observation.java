package io.lockstep.recipes.internal.engine;

import io.lockstep.recipes.locks.AcquireOutcome;

/**
 * One acquisition as observers and the Flight Recorder hear it, when a request makes it in several
 * attempts one after the other (a semaphore's fast try, then the lease that waits behind the
 * mutex): the first attempt withdrawn with no reason ({@link Attempt#withdraw}) tells nobody, the
 * next one started with its observation ({@link Acquisition#start}) carries it on, and observers
 * hear one start, one ending, and the hold. Its {@link #end} is for a request that ends before
 * another attempt carried it on.
 */
public final class Observation {
  private final Telemetry telemetry;

  Observation(Telemetry telemetry) {
    this.telemetry = telemetry;
  }

  Telemetry telemetry() {
    return telemetry;
  }

  /**
   * Tells how the acquisition ended, unless it was told already (an attempt that carried it on was
   * granted, or ended on its own): exactly one ending is told.
   */
  public void end(AcquireOutcome outcome) {
    telemetry.ended(outcome);
  }
}
