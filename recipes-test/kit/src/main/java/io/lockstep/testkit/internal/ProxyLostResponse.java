package io.lockstep.testkit.internal;

import java.util.concurrent.CountDownLatch;

/** An armed {@link TcpProxy#loseNextResponse} fault. */
final class ProxyLostResponse {
  /** The last client chunk number when armed; only later chunks can fire the fault. */
  final long armedAfterChunk;

  final long closeAfterMillis;
  final CountDownLatch fired = new CountDownLatch(1);

  ProxyLostResponse(long armedAfterChunk, long closeAfterMillis) {
    this.armedAfterChunk = armedAfterChunk;
    this.closeAfterMillis = closeAfterMillis;
  }
}
