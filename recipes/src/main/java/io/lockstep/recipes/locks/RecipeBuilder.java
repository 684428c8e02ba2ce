package io.lockstep.recipes.locks;

import org.apache.curator.framework.CuratorFramework;

/**
 * What the builders of the recipes on one path share: the client and the path ({@link KeyedLocks}'
 * root), both checked by the recipe's {@code builder(...)} before the builder is made, so that it
 * fails fast as the constructors do. Each recipe's public {@code Builder} extends it with its own
 * options.
 */
abstract class RecipeBuilder {
  final CuratorFramework client;
  final String path;

  RecipeBuilder(CuratorFramework client, String path) {
    this.client = client;
    this.path = path;
  }
}
