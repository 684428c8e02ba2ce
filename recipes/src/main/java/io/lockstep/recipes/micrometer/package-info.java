/**
 * Lockstep for Micrometer: {@link io.lockstep.recipes.micrometer.LockstepMetrics}, the meters of
 * every lock of a Curator client. Needs {@code micrometer-core} on the class path, which the
 * library does not bring (an optional dependency).
 */
package io.lockstep.recipes.micrometer;
