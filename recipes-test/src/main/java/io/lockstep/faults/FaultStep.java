package io.lockstep.faults;

/**
 * One fault to inject: what, on which group (null for the servers' faults), and for how long (a
 * freeze's length, a restarted server's downtime; ignored by a kill and a client-side expiry).
 */
record FaultStep(FaultKind kind, String group, long durationMs) {}
