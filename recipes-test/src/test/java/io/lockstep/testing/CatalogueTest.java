package io.lockstep.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The recipe catalogue and the in-memory fenced store, without a server. */
@Timeout(10)
class CatalogueTest {
  @Test
  void multiLocks_takeSiblingPaths_andMixedOnesAlternateWriteAndMutex() {
    assertThat(Recipe.MULTI.lockPaths("/l", 3)).containsExactly("/l-a", "/l-b", "/l-c");
    assertThat(Recipe.MULTI_MIXED.parts("/l", 2))
        .containsExactly(LockPart.write("/l-a"), LockPart.mutex("/l-b"));
    assertThat(Recipe.READ.parts("/l", 5)).containsExactly(LockPart.read("/l"));
    assertThatThrownBy(() -> Recipe.MULTI.lockPaths("/l", 27))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void curatorsSemaphoreMutex_keepsItsNodesInTwoDirectories() {
    assertThat(Recipe.NON_REENTRANT_MUTEX.directories(Library.CURATOR, "/l", 1))
        .containsExactly("/l/locks", "/l/leases");
    assertThat(Recipe.NON_REENTRANT_MUTEX.directories(Library.LOCKSTEP, "/l", 1))
        .containsExactly("/l");
  }

  @Test
  void reports_nameEachLibrarysClasses() {
    assertThat(Recipe.MULTI.label(8)).isEqualTo("multi-lock, K = 8");
    assertThat(Recipe.READ.className(Library.LOCKSTEP)).isEqualTo("ReadWriteMutex.readLock()");
    List<LockPart> transfer =
        List.of(LockPart.mutex("/a"), LockPart.write("/b"), LockPart.mutex("/c"));
    assertThat(Library.LOCKSTEP.describeMultiLock(transfer))
        .isEqualTo("MultiMutex (2 mutex + 1 write)");
    assertThat(Library.CURATOR.describeMultiLock(transfer)).isEqualTo("InterProcessMultiLock (3)");
    assertThat(Library.LOCKSTEP.fenced()).isTrue();
    assertThat(Library.CURATOR.fenced()).isFalse();
  }

  @Test
  void aPartIsOnePath() {
    assertThatThrownBy(() -> new LockPart(Recipe.MULTI, "/l"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(LockPart.read("/l").shared()).isTrue();
    assertThat(LockPart.write("/l").shared()).isFalse();
  }

  @Test
  void fencedStore_refusesATokenBelowOneItAccepted() {
    FencedStore store = new FencedStore();

    assertThat(store.write("k", 10)).isTrue();
    assertThat(store.write("k", 10)).isTrue();
    assertThat(store.write("k", 9)).isFalse();
    assertThat(store.write("other", 9)).isTrue();
    assertThat(store.highest("k")).isEqualTo(10);
  }
}
