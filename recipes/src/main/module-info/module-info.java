/**
 * Lockstep's lock recipes for Apache Curator. Only the API packages are exported: the engine's
 * packages ({@code io.lockstep.recipes.internal.*}) are not part of the API. Spring Integration,
 * Micrometer, Reactor, Spring Boot and Spring's web and JDBC modules are optional: their adapters need them, the locks never load
 * them.
 */
module io.lockstep.recipes {
  requires transitive curator.framework;
  requires transitive curator.recipes;
  requires transitive curator.client;
  requires transitive zookeeper;
  requires org.slf4j;
  // the fence's API names java.sql's Connection and javax.sql's DataSource
  requires transitive java.sql;
  requires static jdk.jfr;
  requires static spring.integration.core;
  requires static micrometer.core;
  // LockstepObservations: the Observation API and the key values of micrometer-commons
  requires static micrometer.observation;
  requires static micrometer.commons;
  requires static reactor.core;
  requires static org.reactivestreams;
  requires static spring.boot;
  requires static spring.boot.autoconfigure;
  requires static spring.boot.health;
  requires static spring.boot.actuator;
  requires static spring.boot.actuator.autoconfigure;
  // HTTP fencing (io.lockstep.recipes.fence.http)
  requires static spring.web;
  requires static spring.webflux;
  requires static spring.jdbc;
  requires static spring.tx;
  requires static jakarta.servlet;

  exports io.lockstep.recipes.locks;
  exports io.lockstep.recipes.fence;
  exports io.lockstep.recipes.fence.http;
  exports io.lockstep.recipes.leader;
  exports io.lockstep.recipes.leader.compat;
  exports io.lockstep.recipes.spring;
  exports io.lockstep.recipes.micrometer;
  exports io.lockstep.recipes.reactor;
  exports io.lockstep.recipes.boot;
}
