/**
 * Lockstep's implementation: the acquisition engine and its ZooKeeper plumbing. Not API: it may
 * change in any release without notice.
 */
package io.lockstep.recipes.locks.internal;
