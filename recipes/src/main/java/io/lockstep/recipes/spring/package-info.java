/**
 * Lockstep for Spring: {@link io.lockstep.recipes.spring.LockstepLockRegistry}, a Spring
 * Integration {@code LockRegistry} whose locks are Lockstep's, and {@link
 * io.lockstep.recipes.spring.Locked} methods, run under the lock of a key computed from their
 * arguments ({@link io.lockstep.recipes.spring.EnableLockstepLocking}). Needs {@code
 * spring-integration-core} on the class path, which the library does not bring (an optional
 * dependency).
 */
package io.lockstep.recipes.spring;
