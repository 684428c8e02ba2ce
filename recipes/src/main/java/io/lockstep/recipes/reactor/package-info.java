/**
 * Lockstep for Project Reactor: {@link io.lockstep.recipes.reactor.ReactiveLocks}, holds as {@code
 * Mono}s and work run under a lock. Needs {@code reactor-core} on the class path, which the library
 * does not bring (an optional dependency).
 */
package io.lockstep.recipes.reactor;
