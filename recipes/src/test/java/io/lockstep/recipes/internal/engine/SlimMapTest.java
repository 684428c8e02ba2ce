package io.lockstep.recipes.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The map of a lock object's own tables: one entry in a field, more in a concurrent map. */
@Timeout(10)
class SlimMapTest {
  private final SlimMap<String, Integer> map = new SlimMap<>();

  @Test
  void anEmptyMap_hasNothing() {
    assertThat(map.isEmpty()).isTrue();
    assertThat(map.get("a")).isNull();
    assertThat(map.values()).isEmpty();
    map.remove("a"); // nothing to remove: no effect
    assertThat(map.isEmpty()).isTrue();
  }

  @Test
  void oneEntry_isKept_replaced_andRemoved() {
    map.put("a", 1);
    assertThat(map.get("a")).isEqualTo(1);
    assertThat(map.get("b")).isNull();
    assertThat(map.values()).containsExactly(1);

    map.put("a", 2);
    assertThat(map.get("a")).isEqualTo(2);
    map.remove("b");
    assertThat(map.get("a")).as("another key's removal leaves it").isEqualTo(2);

    map.remove("a");
    assertThat(map.isEmpty()).isTrue();
    assertThat(map.get("a")).isNull();
  }

  @Test
  void twoEntries_areBothKept_andTheMapEmptiesAgain() {
    map.put("a", 1);
    map.put("b", 2);
    assertThat(map.get("a")).isEqualTo(1);
    assertThat(map.get("b")).isEqualTo(2);
    assertThat(map.values()).containsExactlyInAnyOrder(1, 2);

    map.remove("a");
    assertThat(map.isEmpty()).isFalse();
    map.remove("b");
    assertThat(map.isEmpty()).isTrue();
    assertThat(map.values()).isEmpty();

    map.put("c", 3);
    assertThat(map.get("c")).isEqualTo(3);
    assertThat(map.values()).containsExactly(3);
  }

  @Test
  void keys_areComparedWithEquals() {
    map.put(new String("a"), 1);
    assertThat(map.get("a")).isEqualTo(1);
    map.remove(new String("a"));
    assertThat(map.isEmpty()).isTrue();
  }

  @Test
  void nullKeysAndValues_areRefused() {
    assertThatNullPointerException().isThrownBy(() -> map.put(null, 1)).withMessage("key");
    assertThatNullPointerException().isThrownBy(() -> map.put("a", null)).withMessage("value");
    assertThat(map.isEmpty()).isTrue();
  }
}
