package io.lockstep.recipes.leader;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** A listener that records every callback: what, of which epoch, on which thread, when. */
final class Recorder implements LeadershipListener {
  /** One callback. */
  record Event(String kind, long epoch, String thread, long nanos) {
    @Override
    public String toString() {
      return kind + "@" + epoch;
    }
  }

  final List<Event> events = new CopyOnWriteArrayList<>();

  @Override
  public void elected(Leadership leadership) {
    record("elected", leadership);
  }

  @Override
  public void atRisk(Leadership leadership) {
    record("atRisk", leadership);
  }

  @Override
  public void restored(Leadership leadership) {
    record("restored", leadership);
  }

  @Override
  public void lost(Leadership leadership) {
    record("lost", leadership);
  }

  /** The kinds heard, in order. */
  List<String> kinds() {
    return events.stream().map(Event::kind).toList();
  }

  /** When {@code kind} was first heard, or -1. */
  long firstNanos(String kind) {
    return events.stream()
        .filter(e -> e.kind().equals(kind))
        .mapToLong(Event::nanos)
        .findFirst()
        .orElse(-1);
  }

  boolean heard(String kind) {
    return kinds().contains(kind);
  }

  private void record(String kind, Leadership leadership) {
    long epoch = ((Term) leadership).epoch();
    events.add(new Event(kind, epoch, Thread.currentThread().getName(), System.nanoTime()));
  }
}
