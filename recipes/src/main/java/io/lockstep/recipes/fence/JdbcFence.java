package io.lockstep.recipes.fence;

import io.lockstep.recipes.locks.LockHold;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.regex.Pattern;
import javax.sql.DataSource;

/**
 * The database's half of fencing: admits a lock holder's fencing token inside the holder's own JDBC
 * transaction, and refuses a token older than one admitted before for the same resource.
 *
 * <p><b>Admitted.</b> A table (by default {@code lockstep_fence}) keeps, per resource, the greatest
 * token admitted so far. {@link #admit(Connection, String, long)} runs in the caller's transaction:
 * it locks the resource's row, and admits the token if no greater one was admitted before (an equal
 * one is admitted again: the same holder writing twice), or throws {@link
 * StaleFencingTokenException}. The admission commits or rolls back with the caller's own writes, so
 * a write of a stale holder never commits, and a rolled-back admission leaves no trace. The row
 * stays locked until the transaction ends, so transactions that admit tokens for one resource
 * commit one after another, in the order of their tokens; those of different resources do not wait
 * for each other. Use one resource name per lock: the lock's path, or a name that maps to one lock
 * (tokens are comparable only between holders of one lock).
 *
 * <p><b>Usage.</b> Admit first, then write, then commit; on any failure, roll back:
 *
 * <pre>{@code
 * import io.lockstep.recipes.fence.JdbcFence;
 * import io.lockstep.recipes.locks.FencedLock;
 * import io.lockstep.recipes.locks.LockHold;
 * import java.sql.Connection;
 * import java.sql.PreparedStatement;
 * import java.sql.SQLException;
 * import javax.sql.DataSource;
 *
 * DataSource dataSource = ...; // the application's database
 * FencedLock lock = ...; // any of Lockstep's locks: this one on /locks/orders/17
 * JdbcFence fence = JdbcFence.of(dataSource);
 * try (LockHold hold = lock.hold();
 *     Connection connection = dataSource.getConnection()) {
 *   connection.setAutoCommit(false);
 *   try {
 *     fence.admit(connection, "/locks/orders/17", hold); // refused if a newer holder wrote
 *     try (PreparedStatement update =
 *         connection.prepareStatement("UPDATE orders SET state = ? WHERE id = ?")) {
 *       update.setString(1, "paid");
 *       update.setLong(2, 17);
 *       update.executeUpdate();
 *     }
 *     connection.commit();
 *   } catch (SQLException | RuntimeException e) {
 *     connection.rollback();
 *     throw e;
 *   }
 * }
 * }</pre>
 *
 * <p><b>Databases.</b> The dialect is told by {@code DatabaseMetaData.getDatabaseProductName()} at
 * first use: PostgreSQL (one {@code INSERT ... ON CONFLICT} statement), MySQL and MariaDB ({@code
 * INSERT ... ON DUPLICATE KEY UPDATE}, then a locking read), H2, and any other database that knows
 * {@code SELECT ... FOR UPDATE} and savepoints (a locking read, then {@code UPDATE} or {@code
 * INSERT}). Under {@code READ COMMITTED}, a first admission racing another for a new resource never
 * surfaces as a duplicate key; under a stricter isolation it may fail as the snapshot's conflicts
 * do (below).
 *
 * <p><b>Failures.</b> A stale token throws {@link StaleFencingTokenException}, having written
 * nothing. Database failures (no table, a lock wait timed out, a deadlock, a serialization failure
 * under {@code REPEATABLE READ} or {@code SERIALIZABLE} isolation when another transaction admitted
 * for the same resource meanwhile, which H2 may report as a deadlock or a duplicate key) throw the
 * driver's {@link SQLException}, unwrapped, as the caller's own statements do: roll back, and retry
 * the transaction if its SQLState says so. No method commits, rolls back or changes the caller's
 * connection.
 *
 * <p><b>Limits.</b> Only writes made in a transaction that admitted the token are fenced; a write
 * made outside one is not. Resource names are at most 255 characters in the table's default DDL
 * (docs/fencing.md has the DDL per database); a longer name is refused with {@link
 * IllegalArgumentException} before any write, the column's width read from the database's metadata
 * at the first admission. A JdbcFence holds no connection and no state but the dialect and that
 * width: make one per table and share it.
 */
public final class JdbcFence {
  /*
   * Algorithm notes: the table has one row per resource, holding the greatest token admitted.
   * Invariants: a row's token only grows; an admission holds the row's lock until the caller's
   * transaction ends, so the admissions of one resource are serialised by the database, and a
   * transaction that admitted token t commits before any transaction that then reads the row (and
   * so before any later admission, of a token >= t). An admission is:
   *   lock the row (creating it with our token if there is none);
   *   if the row's token > ours: refuse, the token unchanged;
   *   else set it to ours (unchanged if equal).
   * The dialects differ only in how the row is locked and created without a duplicate-key error
   * reaching the caller (see Dialect). The SQL names the table as given, unquoted, so it is folded
   * to the database's case like the DDL that created it.
   */

  /** The default table: {@value}. */
  public static final String DEFAULT_TABLE = "lockstep_fence";

  /**
   * A plain SQL identifier, optionally qualified by a schema: nothing to quote, nothing to inject.
   */
  private static final Pattern TABLE =
      Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,62}(\\.[A-Za-z_][A-Za-z0-9_]{0,62})?");

  private final DataSource dataSource;
  private final String table;
  private final Admissions admissions; // the statements, per dialect

  /**
   * The database's dialect: null until the first use, which reads it from a connection's metadata
   * (two first uses at once both read it, to the same value).
   */
  private volatile Dialect dialect;

  /**
   * The width of the table's resource column, in characters: 0 until a first admission finds the
   * column in the database's metadata (then the widest column of that name, to refuse no name the
   * table would take), and read again while it is not found.
   */
  private volatile int resourceWidth;

  private JdbcFence(DataSource dataSource, String table) {
    this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
    this.table = checkTable(table);
    this.admissions = new Admissions(this.table);
  }

  /**
   * A fence on the default table, {@value #DEFAULT_TABLE}. Nothing is sent to the database until
   * the first use.
   *
   * @param dataSource the database of the guarded data: {@link #createTableIfMissing()} and {@link
   *     #highestAdmitted(String)} take their connections from it
   * @return the fence
   * @throws NullPointerException if {@code dataSource} is null
   */
  public static JdbcFence of(DataSource dataSource) {
    return new JdbcFence(dataSource, DEFAULT_TABLE);
  }

  /**
   * A fence on a table of the caller's naming, with the default table's columns (see
   * docs/fencing.md). Nothing is sent to the database until the first use.
   *
   * @param dataSource the database of the guarded data
   * @param table the table's name: a plain SQL identifier (letters, digits and underscores, not
   *     starting with a digit, at most 63 characters), optionally qualified by a schema ({@code
   *     billing.fence}); it is not quoted, so the database folds its case as in unquoted DDL
   * @return the fence
   * @throws NullPointerException if {@code dataSource} or {@code table} is null
   * @throws IllegalArgumentException if {@code table} is not such a name
   */
  public static JdbcFence of(DataSource dataSource, String table) {
    return new JdbcFence(dataSource, table);
  }

  /**
   * Creates the table unless it exists, on a connection of its own in auto-commit mode. Calling it
   * again, or from several processes at once, is harmless. Teams that manage their schema with
   * migrations (Flyway, Liquibase) create the table there instead, with the DDL of docs/fencing.md.
   *
   * @throws SQLException if the table could not be created and does not exist
   */
  public void createTableIfMissing() throws SQLException {
    try (Connection connection = dataSource.getConnection()) {
      Dialect dialect = dialect(connection);
      boolean autoCommit = connection.getAutoCommit();
      if (!autoCommit) {
        connection.setAutoCommit(true);
      }
      try (Statement statement = connection.createStatement()) {
        statement.execute(dialect.createTable(table));
      } catch (SQLException failed) {
        // created meanwhile by another process (a plain CREATE TABLE, or PostgreSQL's race of two
        // CREATE TABLE IF NOT EXISTS on its catalogue): the table is there, which is all we want
        if (!tableExists(connection)) {
          throw failed;
        }
      } finally {
        if (!autoCommit) {
          connection.setAutoCommit(false);
        }
      }
    }
  }

  /**
   * Admits {@code token} as the newest fencing token of {@code resource}, in the caller's
   * transaction, or refuses it because a greater token was admitted before. An equal token is
   * admitted again. The resource's row stays locked until the transaction ends: a concurrent
   * admission for the same resource waits for it (within the database's lock timeout). This method
   * never commits, rolls back or changes the connection's auto-commit mode.
   *
   * @param connection the caller's connection, in a transaction (auto-commit off)
   * @param resource the guarded resource's name: one name per lock, not blank
   * @param token the holder's fencing token ({@link LockHold#fencingToken()}), at least 1 (tokens
   *     are ZooKeeper zxids, which start at 1)
   * @throws NullPointerException if {@code connection} or {@code resource} is null
   * @throws IllegalArgumentException if {@code resource} is blank or longer than the table's
   *     resource column, {@code token} is below 1, or the connection is in auto-commit mode
   *     (nothing is written then, and the transaction goes on)
   * @throws StaleFencingTokenException if a greater token was admitted for {@code resource}: the
   *     caller's hold is stale; nothing was written, roll the transaction back
   * @throws SQLException if the database fails (the table is missing, a lock wait timed out, a
   *     serialization failure): roll the transaction back
   */
  public void admit(Connection connection, String resource, long token) throws SQLException {
    Objects.requireNonNull(connection, "connection");
    checkResource(resource);
    if (token < 1) {
      throw new IllegalArgumentException("token must be at least 1: " + token);
    }
    if (connection.getAutoCommit()) {
      throw new IllegalArgumentException(
          "connection is in auto-commit mode: admit joins the caller's transaction, so turn"
              + " auto-commit off first (connection.setAutoCommit(false))");
    }
    int width = resourceWidth(connection);
    int length = resource.codePointCount(0, resource.length());
    if (width > 0 && length > width) {
      throw new IllegalArgumentException(
          "resource is "
              + length
              + " characters long, longer than the "
              + width
              + " of the column "
              + table
              + ".resource (widen the column for longer names): '"
              + resource
              + "'");
    }
    admissions.admit(dialect(connection), connection, resource, token);
  }

  /**
   * Admits the fencing token of {@code hold}: {@link #admit(Connection, String, long)} with {@link
   * LockHold#fencingToken()}, and everything it says.
   *
   * @param connection the caller's connection, in a transaction (auto-commit off)
   * @param resource the guarded resource's name: one name per lock, not blank
   * @param hold the caller's hold of the resource's lock
   * @throws NullPointerException if {@code connection}, {@code resource} or {@code hold} is null
   * @throws IllegalArgumentException if {@code resource} is blank, or the connection is in
   *     auto-commit mode
   * @throws io.lockstep.recipes.locks.LockOwnershipLostException if the hold is already known to be
   *     lost (nothing is sent to the database then)
   * @throws IllegalStateException if the hold was closed
   * @throws io.lockstep.recipes.locks.LockException if the hold hands off locally and its token
   *     could not be had (see {@link LockHold#fencingToken()})
   * @throws StaleFencingTokenException if a greater token was admitted for {@code resource}
   * @throws SQLException if the database fails: roll the transaction back
   */
  public void admit(Connection connection, String resource, LockHold hold) throws SQLException {
    Objects.requireNonNull(connection, "connection");
    checkResource(resource);
    Objects.requireNonNull(hold, "hold");
    admit(connection, resource, hold.fencingToken());
  }

  /**
   * The greatest token admitted and committed for {@code resource}, read on a connection of its
   * own.
   *
   * @param resource the resource's name, not blank
   * @return the token, or empty if none was ever admitted
   * @throws NullPointerException if {@code resource} is null
   * @throws IllegalArgumentException if {@code resource} is blank
   * @throws SQLException if the database fails, or the table is missing
   */
  public OptionalLong highestAdmitted(String resource) throws SQLException {
    checkResource(resource);
    try (Connection connection = dataSource.getConnection()) {
      return admissions.read(connection, resource, false);
    }
  }

  /**
   * The table's name, as given.
   *
   * @return the table
   */
  public String table() {
    return table;
  }

  @Override
  public String toString() {
    return "JdbcFence[" + table + "]";
  }

  private boolean tableExists(Connection connection) {
    try (Statement statement = connection.createStatement();
        ResultSet ignored =
            statement.executeQuery("SELECT fencing_token FROM " + table + " WHERE 1 = 0")) {
      return true;
    } catch (SQLException missing) {
      return false;
    }
  }

  private Dialect dialect(Connection connection) throws SQLException {
    Dialect known = dialect;
    if (known == null) {
      known = Dialect.of(connection.getMetaData().getDatabaseProductName());
      dialect = known;
    }
    return known;
  }

  private int resourceWidth(Connection connection) throws SQLException {
    int known = resourceWidth;
    if (known == 0) {
      known = columnWidth(connection.getMetaData());
      resourceWidth = known;
    }
    return known;
  }

  /**
   * The widest column named resource of a table of our name, in the case as written, upper or lower
   * (as the database folded the unquoted DDL); 0 if there is none (the table is missing).
   */
  private int columnWidth(DatabaseMetaData metadata) throws SQLException {
    int dot = table.indexOf('.');
    String schema = dot < 0 ? null : table.substring(0, dot);
    String name = table.substring(dot + 1);
    int widest = 0;
    for (int fold = 0; fold < 3; fold++) {
      try (ResultSet columns =
          metadata.getColumns(null, fold(schema, fold), fold(name, fold), fold("resource", fold))) {
        while (columns.next()) {
          widest = Math.max(widest, columns.getInt("COLUMN_SIZE"));
        }
      }
    }
    return widest;
  }

  /** {@code identifier} as written (0), in upper case (1) or in lower case (2). */
  private static String fold(String identifier, int fold) {
    if (identifier == null || fold == 0) {
      return identifier;
    }
    return fold == 1 ? identifier.toUpperCase(Locale.ROOT) : identifier.toLowerCase(Locale.ROOT);
  }

  private static String checkTable(String table) {
    Objects.requireNonNull(table, "table");
    if (!TABLE.matcher(table).matches()) {
      throw new IllegalArgumentException(
          "table must be a plain SQL identifier, optionally schema-qualified (letters, digits and"
              + " underscores, not starting with a digit): '"
              + table
              + "'");
    }
    return table;
  }

  private static void checkResource(String resource) {
    Objects.requireNonNull(resource, "resource");
    if (resource.isBlank()) {
      throw new IllegalArgumentException("resource must not be blank: '" + resource + "'");
    }
  }
}
