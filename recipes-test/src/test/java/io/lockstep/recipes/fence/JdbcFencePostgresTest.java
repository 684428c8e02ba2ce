package io.lockstep.recipes.fence;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.testing.PostgresExtension;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@link JdbcFence} on a real PostgreSQL server (see {@link PostgresExtension}). */
class JdbcFencePostgresTest extends JdbcFenceContract {
  @RegisterExtension static final PostgresExtension postgres = new PostgresExtension();

  @Override
  DataSource database() {
    return postgres.dataSource();
  }

  @Override
  int lockWaiters(Connection connection) throws SQLException {
    try (Statement statement = connection.createStatement();
        ResultSet count =
            statement.executeQuery(
                "SELECT COUNT(*) FROM pg_stat_activity"
                    + " WHERE wait_event_type = 'Lock' AND datname = current_database()")) {
      count.next();
      return count.getInt(1);
    }
  }

  /**
   * Under REPEATABLE READ, PostgreSQL refuses to lock a row changed since the transaction's
   * snapshot: the admission fails with the driver's serialization failure (40001), to be retried,
   * even for a token that would be admitted, and never as a stale token.
   */
  @Test
  void underRepeatableRead_anAdmissionSinceTheSnapshot_failsWithASerializationFailure()
      throws Exception {
    assertThat(write("paid", 20)).isTrue();
    try (Connection late = transaction()) {
      late.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
      try (Statement snapshot = late.createStatement()) {
        snapshot.executeQuery("SELECT COUNT(*) FROM orders").close();
      }
      assertThat(write("shipped", 30)).isTrue();

      assertThatThrownBy(() -> fence.admit(late, RESOURCE, 40))
          .isInstanceOfSatisfying(
              SQLException.class, failure -> assertThat(failure.getSQLState()).isEqualTo("40001"));
      late.rollback();
    }
    assertThat(fence.highestAdmitted(RESOURCE)).hasValue(30);
  }
}
