package io.lockstep.recipes.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lockstep.testing.Library;
import io.lockstep.testing.LockThread;
import io.lockstep.testing.Recipe;
import io.lockstep.testing.ZooKeeperExtension;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.schema.Schema;
import org.apache.curator.framework.schema.SchemaSet;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Clients with a Curator {@link SchemaSet} that allows exactly what Curator's lock recipes do, as
 * Curator's own {@code TestInterProcessMutex.testWithSchema} sets it up: each lock directory is a
 * recipe parent (neither ephemeral nor sequential), its children must be ephemeral, sequential and
 * watched, and every other path is refused. Every recipe of both libraries acquires, waits and
 * releases under it.
 */
@Timeout(60)
class SchemaSetTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  private static final int MULTI_PATHS = 2;

  static Stream<Arguments> recipes() {
    return Stream.of(Library.values())
        .flatMap(
            library -> Stream.of(Recipe.values()).map(recipe -> Arguments.of(library, recipe)));
  }

  // Lockstep's first acquire used to create the lock directory with Curator's createContainers,
  // whose unwatched exists of a child path the schema refuses; Curator's lock passed.
  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("recipes")
  void acquireWaitAndRelease_underARecipeSchema_asCuratorsRecipesDo(Library library, Recipe recipe)
      throws Exception {
    List<String> directories = recipe.directories(library, zk.path("lock"), MULTI_PATHS);
    SchemaSet schemas = recipeSchemas(directories);
    InterProcessLock holder = newLock(library, recipe, schemas);
    InterProcessLock next = newLock(library, recipe, schemas);
    CuratorFramework admin = zk.newClient();

    holder.acquire();
    assertThat(holder.isAcquiredInThisProcess()).isTrue();
    int held = nodesIn(admin, directories);
    try (LockThread thread = new LockThread("next")) {
      CompletableFuture<Boolean> waiting =
          thread.call(() -> next.acquire(10, TimeUnit.SECONDS)); // readers share: no wait
      await("next in the queue").until(() -> nodesIn(admin, directories) > held);
      holder.release();
      assertThat(waiting.get(10, TimeUnit.SECONDS)).isTrue();
      thread.run(next::release).get(10, TimeUnit.SECONDS);
    }
    assertThat(holder.isAcquiredInThisProcess()).isFalse();
    assertThat(next.isAcquiredInThisProcess()).isFalse();
  }

  private static InterProcessLock newLock(Library library, Recipe recipe, SchemaSet schemas) {
    CuratorFramework client = zk.newClient(builder -> builder.schemaSet(schemas));
    return recipe.newLock(library, client, zk.path("lock"), MULTI_PATHS);
  }

  private static int nodesIn(CuratorFramework admin, List<String> directories) throws Exception {
    int nodes = 0;
    for (String directory : directories) {
      nodes += admin.getChildren().forPath(directory).size();
    }
    return nodes;
  }

  /** A recipe parent and its recipe children for each directory; no other path allowed. */
  private static SchemaSet recipeSchemas(List<String> directories) {
    List<Schema> schemas = new ArrayList<>();
    for (String directory : directories) {
      schemas.add(Schema.builderForRecipeParent(directory).name(directory).build());
      schemas.add(Schema.builderForRecipe(directory).name(directory + "/*").build());
    }
    return new SchemaSet(schemas, false);
  }
}
