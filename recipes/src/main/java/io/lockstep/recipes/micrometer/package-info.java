/**
 * Lockstep for Micrometer: {@link io.lockstep.recipes.micrometer.LockstepMetrics}, the meters of
 * every lock of a Curator client, and {@link io.lockstep.recipes.micrometer.LockstepObservations},
 * their observations (a wait and a hold per acquisition, for traces). Needs {@code micrometer-core}
 * (the meters) or {@code micrometer-observation} (the observations) on the class path, which the
 * library does not bring (optional dependencies).
 */
package io.lockstep.recipes.micrometer;
