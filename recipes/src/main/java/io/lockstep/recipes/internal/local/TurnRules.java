package io.lockstep.recipes.internal.local;

import java.util.List;

/**
 * The mutex's table as {@link PlaceRules}: local holds take turns on the place ({@link
 * PlaceMachine}); this routes each event to its column.
 */
final class TurnRules implements PlaceRules {
  private final PlaceMachine m;

  TurnRules(PlaceMachine machine) {
    this.m = machine;
  }

  @Override
  public void on(PlaceEvent event, List<PlaceStep> steps) {
    if (event instanceof PlaceEvent.Join join) {
      m.join(join, steps);
    } else if (event instanceof PlaceEvent.Withdraw withdraw) {
      m.withdraw(withdraw.member(), steps);
    } else if (event instanceof PlaceEvent.Release release) {
      m.release(release, steps);
    } else if (event instanceof PlaceEvent.PlaceDecided decided) {
      m.placeDecided(decided.place(), steps);
    } else if (event instanceof PlaceEvent.PlaceGranted granted) {
      m.placeGranted(granted, steps);
    } else if (event instanceof PlaceEvent.PlaceEnded ended) {
      m.placeEnded(ended, steps);
    } else if (event instanceof PlaceEvent.PlaceChanged changed) {
      m.placeChanged(changed, steps);
    } else if (event instanceof PlaceEvent.QueueChanged changed) {
      m.queueChanged(changed.place(), steps);
    } else if (event instanceof PlaceEvent.Unused) {
      m.unused(steps);
    } else if (event instanceof PlaceEvent.Used) {
      m.used();
    } else if (event instanceof PlaceEvent.LingerDue due) {
      m.lingerDue(due, steps);
    } else if (event instanceof PlaceEvent.QueueChecked checked) {
      m.queueChecked(checked, steps);
    } else if (event instanceof PlaceEvent.FenceAsked asked) {
      m.fencing.asked(asked, steps);
    } else if (event instanceof PlaceEvent.FenceWritten written) {
      m.fencing.written(written, steps);
    } else if (event instanceof PlaceEvent.FenceFailed failed) {
      m.fencing.failed(failed, steps);
    } else if (event instanceof PlaceEvent.YieldAtRelease yield) {
      yield.member().yields = true;
    }
    m.retireIfIdle(steps);
  }

  @Override
  public int currentPlace() {
    return m.currentPlace();
  }

  @Override
  public PlaceState.Phase placePhase() {
    return m.placePhase();
  }

  @Override
  public boolean isRetirable() {
    return m.isRetirable();
  }

  @Override
  public PlaceState.Held heldBy(Contender member) {
    return m.fencing.heldBy(member);
  }

  @Override
  public PlaceState.Held takeChecks(Contender member) {
    return m.fencing.takeChecks(member);
  }

  @Override
  public PlaceState.Held lastHeldBy(Contender member) {
    return m.fencing.lastHeldBy(member);
  }
}
