/**
 * The resource's half of fencing: {@link io.lockstep.recipes.fence.JdbcFence} admits a lock
 * holder's fencing token inside the holder's own JDBC transaction and refuses a stale one with
 * {@link io.lockstep.recipes.fence.StaleFencingTokenException}, so a paused holder that outlived
 * its session cannot commit a write after a newer holder has. It needs only the JDK's {@code
 * java.sql}; see docs/fencing.md.
 */
package io.lockstep.recipes.fence;
