/**
 * Curator's leader recipes by an import change: {@link
 * io.lockstep.recipes.leader.compat.LeaderLatch} and {@link
 * io.lockstep.recipes.leader.compat.LeaderSelector} have the constructors and methods of Curator's
 * classes of the same names, take their listener interfaces, and run on {@link
 * io.lockstep.recipes.leader.LeaderElection}'s engine, on the nodes Curator's recipes use, so a
 * fleet of both elects one leader; they add the fenced {@link
 * io.lockstep.recipes.leader.Leadership} Curator's recipes lack.
 */
package io.lockstep.recipes.leader.compat;
