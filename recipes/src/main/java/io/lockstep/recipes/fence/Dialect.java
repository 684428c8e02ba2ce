package io.lockstep.recipes.fence;

import java.util.Locale;

/**
 * How a database admits a token: which SQL, and how it serialises admissions of one resource. Told
 * apart by {@code DatabaseMetaData.getDatabaseProductName()}.
 */
enum Dialect {
  /**
   * One statement, {@code INSERT ... ON CONFLICT (resource) DO UPDATE SET fencing_token =
   * GREATEST(...) RETURNING}: it inserts a new resource, or locks the existing row and keeps the
   * greater token, and returns the row's token. A first insert racing another waits for it and then
   * takes the update branch, so no duplicate-key error arises (one could not be retried: PostgreSQL
   * aborts the transaction on any error).
   */
  POSTGRESQL,
  /**
   * {@code INSERT ... ON DUPLICATE KEY UPDATE fencing_token = GREATEST(...)}, which locks the row
   * exclusively even where it changes nothing, then a locking read of the row. Not the generic
   * path: InnoDB keeps the shared lock of a failed duplicate insert, and two transactions that then
   * both ask for the exclusive lock deadlock.
   */
  MYSQL,
  /**
   * The generic path: an insert racing another's uncommitted first insert waits for it and, once it
   * commits, fails with a duplicate key (23505), which the savepoint takes back.
   */
  H2,
  /**
   * {@code SELECT ... FOR UPDATE}, then {@code UPDATE}, or {@code INSERT} for a new resource; a
   * racing first insert fails with a duplicate key (SQLState class 23), is rolled back to a
   * savepoint and the locking read is tried again.
   */
  GENERIC;

  /**
   * The dialect of a database product.
   *
   * @param productName {@code DatabaseMetaData.getDatabaseProductName()}
   */
  static Dialect of(String productName) {
    String name = productName == null ? "" : productName.toLowerCase(Locale.ROOT);
    if (name.contains("postgresql")) {
      return POSTGRESQL;
    }
    if (name.contains("mysql") || name.contains("mariadb")) {
      return MYSQL;
    }
    if (name.equals("h2")) {
      return H2;
    }
    return GENERIC;
  }

  /** The table's DDL, as docs/fencing.md shows it. */
  String createTable(String table) {
    String columns = " (resource VARCHAR(255) NOT NULL PRIMARY KEY, fencing_token BIGINT NOT NULL)";
    return switch (this) {
      case POSTGRESQL, H2 -> "CREATE TABLE IF NOT EXISTS " + table + columns;
      // the fence needs row locks and transactions: InnoDB, whatever the server's default engine
      case MYSQL -> "CREATE TABLE IF NOT EXISTS " + table + columns + " ENGINE=InnoDB";
      case GENERIC -> "CREATE TABLE " + table + columns;
    };
  }
}
