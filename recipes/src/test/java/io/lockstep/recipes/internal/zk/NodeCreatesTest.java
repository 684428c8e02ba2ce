package io.lockstep.recipes.internal.zk;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** How a multi's created paths are read back: with and without a chroot in the connect string. */
class NodeCreatesTest {
  @Test
  void withoutChroot_cutsTheChrootInFrontOfASequentialNode() {
    assertThat(
            NodeCreates.withoutChroot(
                "/locks/a/_c_1-lock-", "/app/root/locks/a/_c_1-lock-0000000004"))
        .isEqualTo("/locks/a/_c_1-lock-0000000004");
  }

  @Test
  void withoutChroot_cutsTheChrootInFrontOfAPlainNode() {
    assertThat(
            NodeCreates.withoutChroot(
                "/rw/_c_1-__READ__0000000007", "/app/rw/_c_1-__READ__0000000007"))
        .isEqualTo("/rw/_c_1-__READ__0000000007");
  }

  @Test
  void withoutChroot_leavesAPathWithoutChrootAsItIs() {
    assertThat(NodeCreates.withoutChroot("/locks/_c_1-lock-", "/locks/_c_1-lock-0000000001"))
        .isEqualTo("/locks/_c_1-lock-0000000001");
  }

  @Test
  void withoutChroot_aChrootThatRepeatsThePath_cutsOnlyTheChroot() {
    assertThat(NodeCreates.withoutChroot("/locks/_c_1-lock-", "/locks/locks/_c_1-lock-0000000001"))
        .isEqualTo("/locks/_c_1-lock-0000000001");
  }
}
