/**
 * Lockstep's lock recipes: drop-in, wire-compatible replacements for Curator's lock recipes that
 * add fencing tokens, loss notification and ownership checks.
 */
package io.lockstep.recipes.locks;
