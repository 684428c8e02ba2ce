/**
 * Lockstep for Spring Boot: auto-configuration of a Curator client, Lockstep's Spring Integration
 * lock registry, its Micrometer meters, a health indicator and an Actuator endpoint listing the
 * holders and waiters of the locks. Each part needs its Spring Boot module on the class path
 * ({@code spring-boot-autoconfigure}; {@code spring-boot-health} for the health indicator, {@code
 * spring-boot-actuator-autoconfigure} for the endpoint), which the library does not bring (optional
 * dependencies); each backs off when the application defines its own bean, and each can be turned
 * off by a property. The properties, their defaults and the beans: {@code docs/spring-boot.md}.
 */
package io.lockstep.recipes.boot;
