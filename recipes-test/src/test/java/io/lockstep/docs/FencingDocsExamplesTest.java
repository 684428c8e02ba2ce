package io.lockstep.docs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.recipes.fence.JdbcFence;
import io.lockstep.recipes.fence.StaleFencingTokenException;
import io.lockstep.recipes.locks.LockHold;
import io.lockstep.recipes.locks.ReentrantMutex;
import io.lockstep.testing.ZooKeeperExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.OptionalLong;
import javax.sql.DataSource;
import org.apache.curator.framework.CuratorFramework;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The examples of docs/fencing.md, run against a real ZooKeeper server and an H2 database (the
 * fence itself is tested on H2 and PostgreSQL by {@code io.lockstep.recipes.fence}'s tests).
 */
@Timeout(60)
class FencingDocsExamplesTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  // ---- docs/fencing.md ----

  @Test
  void fencing_aHoldAdmitsItsTokenAndWrites_inOneTransaction() throws Exception {
    DataSource database = ordersDatabase();

    // docs/fencing.md: the table
    // import io.lockstep.recipes.fence.JdbcFence;
    // import javax.sql.DataSource;

    DataSource dataSource = database; // docs: ... the application's database (a connection pool)
    JdbcFence fence = JdbcFence.of(dataSource); // the table lockstep_fence
    fence.createTableIfMissing(); // or create it with your migrations, below
    // docs: end

    // docs/fencing.md: a fenced write
    // import io.lockstep.recipes.locks.LockHold;
    // import io.lockstep.recipes.locks.ReentrantMutex;
    // import java.sql.Connection;
    // import java.sql.PreparedStatement;
    // import java.sql.SQLException;
    // import org.apache.curator.framework.CuratorFramework;

    CuratorFramework client = zk.newClient(); // docs: ... a started client
    ReentrantMutex lock = new ReentrantMutex(client, "/locks/orders/17");
    try (LockHold hold = lock.hold();
        Connection connection = dataSource.getConnection()) {
      connection.setAutoCommit(false);
      try {
        fence.admit(connection, "/locks/orders/17", hold); // refused if a newer holder wrote
        try (PreparedStatement paid =
            connection.prepareStatement("UPDATE orders SET state = 'paid' WHERE id = ?")) {
          paid.setLong(1, 17);
          paid.executeUpdate();
        }
        connection.commit(); // the admission and the write commit together, or neither does
      } catch (SQLException | RuntimeException e) {
        connection.rollback(); // stale (a newer holder wrote) or failed: none of it lands
        throw e;
      }
    }
    // docs: end
    assertThat(state(dataSource)).isEqualTo("paid");

    // docs/fencing.md: highest admitted
    // import java.util.OptionalLong;

    OptionalLong newest = fence.highestAdmitted("/locks/orders/17"); // committed admissions only
    // docs: end
    assertThat(newest).isPresent();
    assertThat(newest.getAsLong()).isPositive();

    // an older token than the one admitted is refused: the page's story, in a few lines
    try (Connection connection = dataSource.getConnection()) {
      connection.setAutoCommit(false);
      assertThatThrownBy(() -> fence.admit(connection, "/locks/orders/17", newest.getAsLong() - 1))
          .isInstanceOf(StaleFencingTokenException.class)
          .hasMessageContaining("/locks/orders/17");
      connection.rollback();
    }
  }

  private static DataSource ordersDatabase() throws SQLException {
    JdbcDataSource h2 = new JdbcDataSource();
    h2.setURL("jdbc:h2:mem:fencing-docs;DB_CLOSE_DELAY=-1");
    try (Connection connection = h2.getConnection();
        Statement statement = connection.createStatement()) {
      statement.execute("CREATE TABLE orders (id BIGINT PRIMARY KEY, state VARCHAR(32))");
      statement.execute("INSERT INTO orders VALUES (17, 'new')");
    }
    return h2;
  }

  private static String state(DataSource dataSource) throws SQLException {
    try (Connection connection = dataSource.getConnection();
        Statement statement = connection.createStatement();
        ResultSet row = statement.executeQuery("SELECT state FROM orders WHERE id = 17")) {
      assertThat(row.next()).isTrue();
      return row.getString(1);
    }
  }
}
