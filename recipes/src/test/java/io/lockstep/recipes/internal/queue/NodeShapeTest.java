package io.lockstep.recipes.internal.queue;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * When slots may share one shape: same client, an equal ACL and equal data, whatever the instances
 * (an ACLProvider or a compressing client may hand out new ones each time). The clients are never
 * started: a shape only compares them.
 */
@Timeout(10)
class NodeShapeTest {
  private final CuratorFramework client = newClient();
  private final CuratorFramework other = newClient();

  @AfterEach
  void closeClients() {
    client.close();
    other.close();
  }

  @Test
  void equalAclAndData_inOtherInstances_areTheSame() {
    NodeShape shape = new NodeShape(client, acl(ZooDefs.Perms.ALL), bytes("host-1"));

    assertThat(shape.sameAs(new NodeShape(client, acl(ZooDefs.Perms.ALL), bytes("host-1"))))
        .isTrue();
  }

  @Test
  void anotherClient_anotherAcl_orOtherData_isNotTheSame() {
    NodeShape shape = new NodeShape(client, acl(ZooDefs.Perms.ALL), bytes("host-1"));

    assertThat(shape.sameAs(new NodeShape(other, acl(ZooDefs.Perms.ALL), bytes("host-1"))))
        .as("client")
        .isFalse();
    assertThat(shape.sameAs(new NodeShape(client, acl(ZooDefs.Perms.READ), bytes("host-1"))))
        .as("acl")
        .isFalse();
    assertThat(shape.sameAs(new NodeShape(client, acl(ZooDefs.Perms.ALL), bytes("host-2"))))
        .as("data")
        .isFalse();
    assertThat(shape.sameAs(new NodeShape(client, acl(ZooDefs.Perms.ALL), new byte[0])))
        .as("no data")
        .isFalse();
  }

  @Test
  void aNullAcl_isTheSameOnlyAsAnotherNull() {
    NodeShape none = new NodeShape(client, null, bytes("host-1"));
    NodeShape some = new NodeShape(client, acl(ZooDefs.Perms.ALL), bytes("host-1"));

    assertThat(none.sameAs(new NodeShape(client, null, bytes("host-1")))).isTrue();
    assertThat(none.sameAs(some)).isFalse();
    assertThat(some.sameAs(none)).isFalse();
  }

  private static CuratorFramework newClient() {
    return CuratorFrameworkFactory.newClient("127.0.0.1:1", new RetryOneTime(1));
  }

  private static List<ACL> acl(int perms) {
    List<ACL> acl = new ArrayList<>();
    acl.add(new ACL(perms, ZooDefs.Ids.ANYONE_ID_UNSAFE));
    return acl;
  }

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }
}
