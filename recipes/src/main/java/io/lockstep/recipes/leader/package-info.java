/**
 * Lockstep's leader election: a fenced replacement for Curator's {@code LeaderLatch} and {@code
 * LeaderSelector}, wire-compatible with them on the same path, whose leaderships carry epochs
 * (fencing tokens) that only grow from leader to leader.
 */
package io.lockstep.recipes.leader;
