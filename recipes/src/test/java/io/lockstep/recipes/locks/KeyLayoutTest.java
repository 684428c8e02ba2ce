package io.lockstep.recipes.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.apache.curator.utils.PathUtils;
import org.apache.curator.utils.ZKPaths;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The key layouts, server-less: golden paths (so that the hashed layout cannot drift silently, the
 * digests checked with {@code printf %s <name> | sha256sum}), the way back from a path to its key,
 * and the bound on children per directory.
 */
@Timeout(60)
class KeyLayoutTest {
  private static final String ROOT = "/locks/orders";

  @Test
  void hashedPaths_areTheFirstDigestBytesOfTheNodeName_inLowerCaseHex() {
    KeyLayout two = KeyLayout.hashed(2);

    assertThat(two.pathOf(ROOT, "order-17")).isEqualTo(ROOT + "/72/a9/order-17");
    assertThat(two.pathOf(ROOT, "account-42")).isEqualTo(ROOT + "/be/78/account-42");
    assertThat(two.pathOf(ROOT, "a/b"))
        .as("digest of the encoded name")
        .isEqualTo(ROOT + "/77/17/a%2Fb");
    assertThat(two.pathOf(ROOT, "é")).isEqualTo(ROOT + "/60/6b/%C3%A9");
    assertThat(KeyLayout.hashed(1).pathOf(ROOT, "tenant-a")).isEqualTo(ROOT + "/80/tenant-a");
    assertThat(KeyLayout.hashed(4).pathOf(ROOT, "tenant-a"))
        .isEqualTo(ROOT + "/80/a7/07/af/tenant-a");
    assertThat(KeyLayout.flat().pathOf(ROOT, "a/b")).isEqualTo(ROOT + "/a%2Fb");
  }

  @Test
  void keyOf_givesTheKeyBack_andRefusesAPathOfAnotherLayout() {
    Random random = new Random(24);
    for (KeyLayout layout : new KeyLayout[] {KeyLayout.flat(), KeyLayout.hashed(2)}) {
      for (int i = 0; i < 500; i++) {
        String key = randomKey(random);
        String path = layout.pathOf(ROOT, key);
        PathUtils.validatePath(path);
        assertThat(layout.keyOf(ROOT, path)).isEqualTo(key);
      }
    }
    String hashed = KeyLayout.hashed(2).pathOf(ROOT, "order-17");
    assertThatThrownBy(() -> KeyLayout.flat().keyOf(ROOT, hashed))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("flat");
    assertThatThrownBy(() -> KeyLayout.hashed(2).keyOf(ROOT, ROOT + "/00/00/order-17"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("hashed(2)");
    assertThatThrownBy(() -> KeyLayout.hashed(1).keyOf(ROOT, hashed))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> KeyLayout.hashed(2).keyOf("/other", hashed))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void twentyThousandRandomKeys_leaveNoDirectoryOverItsBound() {
    Random random = new Random(2024);
    Map<String, Integer> children = new HashMap<>();
    int keys = 20_000;
    for (int i = 0; i < keys; i++) {
      String path = KeyLayout.hashed(2).pathOf(ROOT, randomKey(random) + "-" + i);
      for (String dir = path; !dir.equals(ROOT); ) {
        String parent = ZKPaths.getPathAndNode(dir).getPath();
        if (children.merge(parent + " " + dir, 1, Integer::sum) == 1) {
          children.merge(parent, 1, Integer::sum);
        }
        dir = parent;
      }
    }
    children.keySet().removeIf(entry -> entry.contains(" "));
    assertThat(children.get(ROOT)).as("root: one child per first byte").isEqualTo(256);
    assertThat(children.entrySet())
        .allSatisfy(
            entry -> assertThat(entry.getValue()).as(entry.getKey()).isLessThanOrEqualTo(256));
    long leaves = children.keySet().stream().filter(dir -> dir.split("/").length == 5).count();
    int largestLeaf =
        children.entrySet().stream()
            .filter(entry -> entry.getKey().split("/").length == 5)
            .mapToInt(Map.Entry::getValue)
            .max()
            .orElseThrow();
    assertThat(leaves).as("leaf directories in use").isGreaterThan(15_000);
    assertThat(largestLeaf).as("keys in the fullest leaf directory").isLessThanOrEqualTo(10);
  }

  @Test
  void badLevels_andBadArguments_areRefused() {
    assertThatThrownBy(() -> KeyLayout.hashed(0)).hasMessageContaining("levels");
    assertThatThrownBy(() -> KeyLayout.hashed(5)).hasMessageContaining("levels");
    assertThatThrownBy(() -> KeyLayout.hashed(2).pathOf(ROOT, ""))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("key");
    assertThatThrownBy(() -> KeyLayout.hashed(2).pathOf(null, "k"))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("root");
    assertThat(KeyLayout.hashed(2)).isEqualTo(KeyLayout.hashed(2)).isNotEqualTo(KeyLayout.flat());
    assertThat(KeyLayout.hashed(2).levels()).isEqualTo(2);
    assertThat(KeyLayout.flat().levels()).isZero();
  }

  private static String randomKey(Random random) {
    StringBuilder key = new StringBuilder();
    int length = 1 + random.nextInt(20);
    for (int i = 0; i < length; i++) {
      key.append(
          (char) (random.nextInt(3) == 0 ? random.nextInt(0x3000) : 'a' + random.nextInt(26)));
    }
    return key.toString();
  }
}
