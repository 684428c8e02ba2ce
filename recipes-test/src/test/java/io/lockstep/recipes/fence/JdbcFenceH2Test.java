package io.lockstep.recipes.fence;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.AfterEach;

/**
 * {@link JdbcFence} on H2, in memory: a database per test. H2 waits for a row lock for two seconds
 * by default; the tests' writers may queue longer on a busy machine, so the lock timeout is ten.
 */
class JdbcFenceH2Test extends JdbcFenceContract {
  private static final AtomicInteger databaseNumber = new AtomicInteger();

  private JdbcDataSource database;

  @Override
  DataSource database() {
    database = new JdbcDataSource();
    database.setURL(
        "jdbc:h2:mem:fence"
            + databaseNumber.incrementAndGet()
            + ";DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=10000");
    return database;
  }

  /**
   * H2 names no blocker for an insert that waits for another's uncommitted row: the sessions busy
   * with a statement, ours aside (the tests' other transactions are idle between statements).
   */
  @Override
  int lockWaiters(Connection connection) throws SQLException {
    try (Statement statement = connection.createStatement();
        ResultSet count =
            statement.executeQuery(
                "SELECT COUNT(*) FROM INFORMATION_SCHEMA.SESSIONS"
                    + " WHERE SESSION_ID <> SESSION_ID() AND EXECUTING_STATEMENT IS NOT NULL")) {
      count.next();
      return count.getInt(1);
    }
  }

  @AfterEach
  void dropDatabase() throws SQLException {
    try (Connection connection = database.getConnection();
        Statement statement = connection.createStatement()) {
      statement.execute("SHUTDOWN");
    }
  }
}
