package io.lockstep.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.testing.Library;
import io.lockstep.testing.Recipe;
import io.lockstep.testing.ZooKeeperExtension;
import java.util.Locale;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The requests of an uncontended acquire + release, ours against Curator's, counted by the server
 * with the benchmark harness's own counter ({@link CycleCost}), so that this test and the benchmark
 * page agree. Counts are deterministic; times are not and are not asserted here.
 */
@Timeout(120)
class RequestCountTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  private static final int CYCLES = 10;

  /** Counts {@link #CYCLES} cycles of a fresh lock on a fresh path and returns the total. */
  private long requests(Library library, Recipe recipe, int paths) throws Exception {
    CycleCost cost =
        CycleCost.measure(
            new ServerProbe(zk.stats()),
            zk.newClient(),
            library,
            recipe,
            zk.path(library.name().toLowerCase(Locale.ROOT)),
            paths,
            CYCLES);
    assertThat(cost.cycles()).isEqualTo(CYCLES);
    return cost.requests();
  }

  @Test
  void reentrantMutex_takesThreeRequestsPerCycle_likeInterProcessMutex() throws Exception {
    assertThat(requests(Library.LOCKSTEP, Recipe.MUTEX, 1)).isEqualTo(3L * CYCLES);
    assertThat(requests(Library.CURATOR, Recipe.MUTEX, 1)).isEqualTo(3L * CYCLES);
  }

  @Test
  void nonReentrantMutex_takesThreeRequestsPerCycle_whereSemaphoreMutexTakesSeven()
      throws Exception {
    assertThat(requests(Library.LOCKSTEP, Recipe.NON_REENTRANT_MUTEX, 1)).isEqualTo(3L * CYCLES);
    assertThat(requests(Library.CURATOR, Recipe.NON_REENTRANT_MUTEX, 1)).isEqualTo(7L * CYCLES);
  }

  @Test
  void readLock_takesThreeRequestsPerCycle_likeCuratorsReadLock() throws Exception {
    assertThat(requests(Library.LOCKSTEP, Recipe.READ, 1)).isEqualTo(3L * CYCLES);
    assertThat(requests(Library.CURATOR, Recipe.READ, 1)).isEqualTo(3L * CYCLES);
  }

  @Test
  void writeLock_takesThreeRequestsPerCycle_likeCuratorsWriteLock() throws Exception {
    assertThat(requests(Library.LOCKSTEP, Recipe.WRITE, 1)).isEqualTo(3L * CYCLES);
    assertThat(requests(Library.CURATOR, Recipe.WRITE, 1)).isEqualTo(3L * CYCLES);
  }

  @ParameterizedTest(name = "K = {0}")
  @ValueSource(ints = {1, 4, 8, 16})
  void multiMutex_takesThreeRequestsPerCycleWhateverK_whereCuratorTakesThreePerPath(int paths)
      throws Exception {
    assertThat(requests(Library.LOCKSTEP, Recipe.MULTI, paths)).isEqualTo(3L * CYCLES);
    assertThat(requests(Library.CURATOR, Recipe.MULTI, paths)).isEqualTo(3L * paths * CYCLES);
  }

  @Test
  void countingSemaphore_takesThreeRequestsPerCycle_whereInterProcessSemaphoreV2TakesSeven()
      throws Exception {
    for (Library library : Library.values()) {
      CycleCost cost =
          SemaphoreScenario.count(
              new ServerProbe(zk.stats()),
              zk.newClient(),
              library,
              zk.path("semaphore-" + library.name().toLowerCase(Locale.ROOT)),
              4,
              CYCLES);
      assertThat(cost.requests())
          .as(library.label())
          .isEqualTo((library == Library.CURATOR ? 7L : 3L) * CYCLES);
      assertThat(cost.writes())
          .as(library.label())
          .isEqualTo((library == Library.CURATOR ? 4L : 2L) * CYCLES);
    }
  }
}
