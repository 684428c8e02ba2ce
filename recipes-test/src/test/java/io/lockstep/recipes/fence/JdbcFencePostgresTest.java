package io.lockstep.recipes.fence;

import io.lockstep.testing.PostgresExtension;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;
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
}
