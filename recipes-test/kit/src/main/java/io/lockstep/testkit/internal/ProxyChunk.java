package io.lockstep.testkit.internal;

import java.util.concurrent.Delayed;
import java.util.concurrent.TimeUnit;

/**
 * For {@link TcpProxy}: a piece of one direction's byte stream, due for delivery at {@code
 * dueNanos}.
 */
final class ProxyChunk implements Delayed {
  enum Kind {
    DATA,
    END_OF_STREAM,
    STOP
  }

  /** Tells a writer to exit; always due and ahead of every other chunk. */
  static final ProxyChunk STOP = new ProxyChunk(Kind.STOP, null, 0, 0, 0);

  final Kind kind;
  final byte[] data;
  final long dueNanos;
  final long sequence;
  final long clientChunkNumber;

  private ProxyChunk(Kind kind, byte[] data, long dueNanos, long sequence, long clientChunkNumber) {
    this.kind = kind;
    this.data = data;
    this.dueNanos = dueNanos;
    this.sequence = sequence;
    this.clientChunkNumber = clientChunkNumber;
  }

  static ProxyChunk data(byte[] data, long dueNanos, long sequence, long clientChunkNumber) {
    return new ProxyChunk(Kind.DATA, data, dueNanos, sequence, clientChunkNumber);
  }

  static ProxyChunk endOfStream(long dueNanos, long sequence) {
    return new ProxyChunk(Kind.END_OF_STREAM, null, dueNanos, sequence, 0);
  }

  @Override
  public long getDelay(TimeUnit unit) {
    if (kind == Kind.STOP) {
      return -1;
    }
    return unit.convert(dueNanos - System.nanoTime(), TimeUnit.NANOSECONDS);
  }

  @Override
  public int compareTo(Delayed other) {
    ProxyChunk that = (ProxyChunk) other;
    if (kind == Kind.STOP || that.kind == Kind.STOP) {
      return Boolean.compare(that.kind == Kind.STOP, kind == Kind.STOP);
    }
    int byDue = Long.signum(dueNanos - that.dueNanos);
    return byDue != 0 ? byDue : Long.compare(sequence, that.sequence);
  }
}
