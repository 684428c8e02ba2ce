package io.lockstep.recipes.fence;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.util.OptionalLong;

/**
 * The statements of an admission to one fence table, in each {@link Dialect}: which rows they lock,
 * insert and update, and what they read back. {@link JdbcFence} checks the arguments and picks the
 * dialect; this class only talks SQL, in the caller's transaction.
 */
final class Admissions {
  private final String table; // checked by JdbcFence: a plain identifier, safe to put in SQL

  Admissions(String table) {
    this.table = table;
  }

  /** Admits {@code token} for {@code resource}, or throws {@link StaleFencingTokenException}. */
  void admit(Dialect dialect, Connection connection, String resource, long token)
      throws SQLException {
    switch (dialect) {
      case POSTGRESQL -> admitPostgres(connection, resource, token);
      case MYSQL -> admitMysql(connection, resource, token);
      case H2, GENERIC -> admitGeneric(connection, resource, token);
    }
  }

  /**
   * One statement: inserts the row, or locks it and keeps the greater of its token and ours, and
   * returns the token it holds now: ours if admitted, a greater one if not.
   */
  private void admitPostgres(Connection connection, String resource, long token)
      throws SQLException {
    String upsert =
        "INSERT INTO "
            + table
            + " AS f (resource, fencing_token) VALUES (?, ?)"
            + " ON CONFLICT (resource) DO UPDATE"
            + " SET fencing_token = GREATEST(f.fencing_token, EXCLUDED.fencing_token)"
            + " RETURNING f.fencing_token";
    long highest;
    try (PreparedStatement statement = connection.prepareStatement(upsert)) {
      statement.setString(1, resource);
      statement.setLong(2, token);
      try (ResultSet row = statement.executeQuery()) {
        row.next();
        highest = row.getLong(1);
      }
    }
    if (highest > token) {
      throw new StaleFencingTokenException(resource, token, highest);
    }
  }

  /** Insert, or lock the row and raise its token to ours if greater; then read it, locked. */
  private void admitMysql(Connection connection, String resource, long token) throws SQLException {
    String upsert =
        "INSERT INTO "
            + table
            + " (resource, fencing_token) VALUES (?, ?)"
            + " ON DUPLICATE KEY UPDATE fencing_token = GREATEST(fencing_token, ?)";
    try (PreparedStatement statement = connection.prepareStatement(upsert)) {
      statement.setString(1, resource);
      statement.setLong(2, token);
      statement.setLong(3, token);
      statement.executeUpdate();
    }
    // a locking read is a current read, not the transaction's snapshot
    long highest = read(connection, resource, true).orElseThrow();
    if (highest > token) {
      throw new StaleFencingTokenException(resource, token, highest);
    }
  }

  /**
   * A locking read, then an update or an insert; an insert that loses a race with another first
   * admission is rolled back to a savepoint and the read is tried again, once the other has
   * committed (it waited for it).
   */
  private void admitGeneric(Connection connection, String resource, long token)
      throws SQLException {
    for (int attempt = 1; ; attempt++) {
      OptionalLong highest = read(connection, resource, true);
      if (highest.isPresent()) {
        long stored = highest.getAsLong();
        if (stored > token) {
          throw new StaleFencingTokenException(resource, token, stored);
        }
        if (stored < token) {
          update(connection, resource, token);
        }
        return;
      }
      Savepoint savepoint =
          connection.getMetaData().supportsSavepoints() ? connection.setSavepoint() : null;
      try {
        insert(connection, resource, token);
      } catch (SQLException raced) {
        if (!isIntegrityViolation(raced) || attempt >= 3) {
          throw raced;
        }
        if (savepoint != null) {
          connection.rollback(savepoint);
        }
        continue;
      }
      if (savepoint != null) {
        connection.releaseSavepoint(savepoint);
      }
      return;
    }
  }

  OptionalLong read(Connection connection, String resource, boolean forUpdate) throws SQLException {
    String select =
        "SELECT fencing_token FROM "
            + table
            + " WHERE resource = ?"
            + (forUpdate ? " FOR UPDATE" : "");
    try (PreparedStatement statement = connection.prepareStatement(select)) {
      statement.setString(1, resource);
      try (ResultSet row = statement.executeQuery()) {
        return row.next() ? OptionalLong.of(row.getLong(1)) : OptionalLong.empty();
      }
    }
  }

  private void update(Connection connection, String resource, long token) throws SQLException {
    write(
        connection,
        "UPDATE " + table + " SET fencing_token = ? WHERE resource = ?",
        token,
        resource);
  }

  private void insert(Connection connection, String resource, long token) throws SQLException {
    write(
        connection,
        "INSERT INTO " + table + " (fencing_token, resource) VALUES (?, ?)",
        token,
        resource);
  }

  /** Runs {@code sql}, whose parameters are the token and then the resource. */
  private static void write(Connection connection, String sql, long token, String resource)
      throws SQLException {
    try (PreparedStatement statement = connection.prepareStatement(sql)) {
      statement.setLong(1, token);
      statement.setString(2, resource);
      statement.executeUpdate();
    }
  }

  /** SQLState class 23: a duplicate key, as every database reports one. */
  private static boolean isIntegrityViolation(SQLException e) {
    String state = e.getSQLState();
    return state != null && state.startsWith("23");
  }
}
