package io.lockstep.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.bench.BenchmarkPage.Block;
import io.lockstep.bench.BenchmarkSuite.Arguments;
import io.lockstep.bench.BenchmarkSuite.Section;
import io.lockstep.testing.Recipe;
import java.util.EnumSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The suite's command line: which sections run and which blocks of the page they may replace. */
@Timeout(10)
class SuiteArgumentsTest {
  @Test
  void anUpdate_ofASectionThatSaysItsOwnRun_replacesItsBlockOnly() {
    Arguments arguments =
        Arguments.parse(new String[] {"--full", "--only", "unreachable", "--update"});

    assertThat(arguments.sections()).containsExactly(Section.UNREACHABLE);
    assertThat(arguments.writesPage()).isTrue();
    assertThat(arguments.blocks()).containsExactly(Block.UNREACHABLE);
    assertThat(arguments.command())
        .isEqualTo("mvn -B -Pbench verify -Dbench.args=\"--full --only unreachable --update\"");
  }

  @Test
  void anUpdate_ofTheWholeSuiteOrOfASectionTheRunTableDescribes_isRefused() {
    assertThatThrownBy(() -> Arguments.parse(new String[] {"--update"}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not the whole suite");
    assertThatThrownBy(
            () -> Arguments.parse(new String[] {"--only", "unreachable,handoff", "--update"}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not handoff");
  }

  @Test
  void anUpdate_ofTheSemaphoreElectionSection_replacesItsBlockOnly_aloneOrWithUnreachable() {
    Arguments arguments =
        Arguments.parse(new String[] {"--full", "--only", "semaphore-election", "--update"});

    assertThat(arguments.sections()).containsExactly(Section.SEMAPHORE_ELECTION);
    assertThat(arguments.writesPage()).isTrue();
    assertThat(arguments.blocks()).containsExactly(Block.SEMAPHORE_ELECTION);
    assertThat(
            Arguments.parse(new String[] {"--only", "unreachable,semaphore-election", "--update"})
                .blocks())
        .containsExactly(Block.UNREACHABLE, Block.SEMAPHORE_ELECTION);
    assertThatThrownBy(
            () ->
                Arguments.parse(new String[] {"--only", "semaphore-election,watches", "--update"}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(
            "(uncontended, multi, unreachable, semaphore-election, linger, keyed, fence,"
                + " readshare)")
        .hasMessageContaining("not watches");
    assertThat(Arguments.parse(new String[] {"--only", "semaphore-election"}).writesPage())
        .isFalse();
  }

  @Test
  void anUpdate_ofTheUncontendedRows_replacesTheirSharedBlockOnly() {
    Arguments arguments =
        Arguments.parse(new String[] {"--quick", "--only", "uncontended", "--update"});

    assertThat(arguments.sections()).containsExactly(Section.UNCONTENDED);
    assertThat(arguments.writesPage()).isTrue();
    assertThat(arguments.blocks()).containsExactly(Block.UNCONTENDED);
    assertThat(Arguments.parse(new String[] {"--only", "uncontended,multi", "--update"}).blocks())
        .containsExactly(Block.UNCONTENDED);
    assertThat(Arguments.parse(new String[] {"--only", "uncontended"}).writesPage()).isFalse();
    assertThatThrownBy(
            () -> Arguments.parse(new String[] {"--only", "uncontended,slowlink", "--update"}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not slowlink");
  }

  @Test
  void anUpdate_ofTheReadShareSection_replacesItsBlockOnly() {
    Arguments arguments =
        Arguments.parse(new String[] {"--full", "--only", "readshare", "--update"});

    assertThat(arguments.sections()).containsExactly(Section.READSHARE);
    assertThat(arguments.writesPage()).isTrue();
    assertThat(arguments.blocks()).containsExactly(Block.READSHARE);
    assertThat(Arguments.parse(new String[] {"--only", "readshare"}).writesPage()).isFalse();
    assertThatThrownBy(() -> Arguments.parse(new String[] {"--only", "readshare,rw", "--update"}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not rw");
  }

  @Test
  void recipes_narrowTheUncontendedRows_andUpdateNoBlock() {
    Arguments arguments =
        Arguments.parse(
            new String[] {"--only", "uncontended", "--recipes", "mutex,Non-Reentrant-Mutex"});

    assertThat(arguments.recipes()).containsExactly(Recipe.MUTEX, Recipe.NON_REENTRANT_MUTEX);
    assertThat(arguments.writesPage()).isFalse();
    assertThat(Arguments.parse(new String[] {"--only", "uncontended"}).recipes())
        .isEqualTo(EnumSet.allOf(Recipe.class));
    assertThatThrownBy(
            () ->
                Arguments.parse(
                    new String[] {"--only", "uncontended", "--recipes", "mutex", "--update"}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("updates no block");
    assertThatThrownBy(() -> Arguments.parse(new String[] {"--recipes", "lock"}))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void aRunWithoutUpdate_replacesEveryBlock_andAPartialOneWritesNothing() {
    assertThat(Arguments.parse(new String[0]).blocks()).isEqualTo(EnumSet.allOf(Block.class));
    assertThat(Arguments.parse(new String[] {"--only", "unreachable"}).writesPage()).isFalse();
  }
}
