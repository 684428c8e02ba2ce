package io.lockstep.recipes.spring;

import java.time.Duration;

/**
 * What {@link Locked} methods take when their annotation leaves it out: the time to live of a
 * call's hold, from {@link LockedBeanPostProcessor#setDefaultTtl} or the {@link #TTL_PROPERTY}.
 *
 * @param ttl the default time to live, or null for none
 */
record LockedDefaults(Duration ttl) {
  /** The property of the default time to live, read from the context's environment. */
  static final String TTL_PROPERTY = "lockstep.locked.default-ttl";
}
