/**
 * Curator's leader recipes by an import change: {@link
 * io.lockstep.recipes.leader.compat.LeaderLatch} has the constructors and methods of Curator's
 * {@code org.apache.curator.framework.recipes.leader.LeaderLatch}, takes its listener interface,
 * and runs on {@link io.lockstep.recipes.leader.LeaderElection}'s engine, on the nodes Curator's
 * latches use, so a fleet of both elects one leader; it adds the fenced {@link
 * io.lockstep.recipes.leader.Leadership} Curator's latch lacks.
 */
package io.lockstep.recipes.leader.compat;
