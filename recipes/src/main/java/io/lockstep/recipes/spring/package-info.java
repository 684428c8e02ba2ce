/**
 * Lockstep for Spring Integration: {@link io.lockstep.recipes.spring.LockstepLockRegistry}, a
 * {@code LockRegistry} whose locks are Lockstep's. Needs {@code spring-integration-core} on the
 * class path, which the library does not bring (an optional dependency).
 */
package io.lockstep.recipes.spring;
