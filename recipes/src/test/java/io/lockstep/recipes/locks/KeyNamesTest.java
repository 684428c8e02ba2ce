package io.lockstep.recipes.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.apache.curator.utils.PathUtils;

/**
 * Every string Java can hold is a key with a node name of its own (issue 21: keys that differed
 * only in lone surrogates shared one node), a name ZooKeeper accepts, and the key comes back from
 * it.
 */
class KeyNamesTest {
  @Provide
  Arbitrary<String> keys() {
    return Arbitraries.strings().all().ofMinLength(1).ofMaxLength(24);
  }

  @Property(tries = 3000)
  void everyKey_comesBackFromItsName_andItsNameIsAValidNode(@ForAll("keys") String key) {
    String name = KeyNames.encode(key);

    assertThat(KeyNames.decode(name)).isEqualTo(key);
    assertThat(PathUtils.validatePath("/root/" + name)).isEqualTo("/root/" + name);
    assertThat(name).doesNotContain("/").isNotIn(".", "..");
  }

  @Example
  void loneSurrogates_andTheCharactersTheyUsedToBecome_haveNamesOfTheirOwn() {
    List<String> keys =
        List.of(
            "\uD800", "\uD801", "\uDC00", "?", "a\uD800b", "a?b", "\uD83D\uDE00", "%", ".", "..");
    List<String> names = keys.stream().map(KeyNames::encode).toList();

    assertThat(names).doesNotHaveDuplicates();
    assertThat(names.get(0)).isEqualTo("%uD800");
    assertThat(names.get(3)).isEqualTo("%3F");
    assertThat(names.get(6)).as("a pair is one code point").isEqualTo("%F0%9F%98%80");
    assertThat(names.get(8)).isEqualTo("%2E");
  }

  @Example
  void aNameThatIsNoKeysName_isRefused() {
    for (String name : List.of("%", "%G1", "%u12", "a/b", "%C3", "%61", "%2e")) {
      assertThatThrownBy(() -> KeyNames.decode(name))
          .as(name)
          .isInstanceOf(IllegalArgumentException.class);
    }
  }

  @Example
  void aKeyShapedLikeALockNode_getsANameThatIsNone() {
    String key = "_c_12345678-1234-1234-1234-123456789abc-lock-0000000001";

    String name = KeyNames.encode(key);

    assertThat(name).startsWith("%5Fc_");
    assertThat(io.lockstep.recipes.internal.queue.NodeNames.isLockNode(name)).isFalse();
    assertThat(io.lockstep.recipes.internal.queue.NodeNames.isLockNode(key)).isTrue();
    assertThat(KeyNames.decode(name)).isEqualTo(key);
  }
}
