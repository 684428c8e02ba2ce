package io.lockstep.demo;

import io.lockstep.recipes.fence.JdbcFence;
import io.lockstep.recipes.fence.StaleFencingTokenException;
import io.lockstep.testing.Library;
import io.lockstep.testing.LockPart;
import io.lockstep.testing.Recipe;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.ZKPaths;
import org.h2.jdbcx.JdbcConnectionPool;

/**
 * The demo's bank: accounts in a real database, an H2 database in this process's memory that the
 * bank starts and drops, guarded by {@link JdbcFence}; and the ZooKeeper lock paths that guard
 * them.
 *
 * <p>Account {@code i} is the row {@code i} of the table {@code accounts} holding its {@link
 * Balance} and a version that every write increments. Two lock paths belong to it: {@link
 * #lockPath(int)}, a mutex queue that every writer of the account joins (transfers through {@code
 * MultiMutex}, single-account operations through {@code ReentrantMutex} or {@code
 * NonReentrantMutex}), and {@link #auditPath(int)}, a read-write queue where audits read and
 * transfers write. See {@link Workload} for why there are two.
 *
 * <p><b>Fenced writes.</b> Every write is one JDBC transaction that first admits the writer's
 * fencing token for the writer lock's path of each account it writes ({@link
 * JdbcFence#admit(Connection, String, long)}, so the fence's table keeps, per account, the greatest
 * token of its lock's holders), then reads the balances, then writes them and commits. Admitting
 * first makes the reads fenced too: a holder whose token is refused has read nothing, and one that
 * is admitted reads after every transaction of an older holder has ended. A write of token 0 (a
 * Curator lock, which has no token) admits nothing: it is unfenced.
 */
final class Bank {
  /** Every account's opening balance. */
  static final long OPENING_BALANCE = 1_000;

  private final String root;
  private final int accounts;
  private final JdbcConnectionPool database;
  private final JdbcFence fence;

  private Bank(String root, int accounts, JdbcConnectionPool database) {
    this.root = root;
    this.accounts = accounts;
    this.database = database;
    this.fence = JdbcFence.of(database);
  }

  /**
   * Starts the bank's database, named after {@code root}, and opens the accounts; {@code root} is
   * where the lock paths live in ZooKeeper.
   *
   * @param connections the most connections the workers hold at once
   */
  static Bank open(String root, int accounts, int connections) throws SQLException {
    String name = root.replaceAll("[^A-Za-z0-9]+", "-").replaceAll("^-", "");
    // H2 waits 2 s for a row lock by default; a paused holder's rival may wait longer
    JdbcConnectionPool database =
        JdbcConnectionPool.create(
            "jdbc:h2:mem:" + name + ";DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=10000", "sa", "");
    database.setMaxConnections(connections);
    Bank bank = new Bank(root, accounts, database);
    bank.fence.createTableIfMissing();
    try (Connection connection = database.getConnection();
        Statement statement = connection.createStatement()) {
      statement.execute(
          "CREATE TABLE accounts (id INT PRIMARY KEY, available BIGINT NOT NULL,"
              + " reserved BIGINT NOT NULL, version BIGINT NOT NULL)");
      try (PreparedStatement insert =
          connection.prepareStatement("INSERT INTO accounts VALUES (?, ?, 0, 0)")) {
        for (int i = 0; i < accounts; i++) {
          insert.setInt(1, i);
          insert.setLong(2, OPENING_BALANCE);
          insert.addBatch();
        }
        insert.executeBatch();
      }
    }
    return bank;
  }

  int accounts() {
    return accounts;
  }

  long expectedTotal() {
    return OPENING_BALANCE * accounts;
  }

  String root() {
    return root;
  }

  /** The account's name as printed: {@code acct-07}. */
  static String name(int account) {
    return String.format("acct-%02d", account);
  }

  /** The mutex queue every writer of the account joins; the fence's resource for the account. */
  String lockPath(int account) {
    return ZKPaths.makePath(root, "locks", name(account));
  }

  /** The read-write queue where audits read the account and transfers write it. */
  String auditPath(int account) {
    return ZKPaths.makePath(root, "audit", name(account));
  }

  /**
   * What a transfer locks: both accounts' writer locks (as mutexes) and their audit locks' write
   * side.
   */
  List<LockPart> transferParts(int from, int to) {
    return List.of(
        LockPart.mutex(lockPath(from)),
        LockPart.write(auditPath(from)),
        LockPart.mutex(lockPath(to)),
        LockPart.write(auditPath(to)));
  }

  /** What an audit locks: the read side of every account's audit lock. */
  List<LockPart> auditParts() {
    List<LockPart> parts = new ArrayList<>(accounts);
    for (int i = 0; i < accounts; i++) {
      parts.add(LockPart.read(auditPath(i)));
    }
    return parts;
  }

  /** What reading one balance locks: the read side of the account's audit lock. */
  LockPart balancePart(int account) {
    return LockPart.read(auditPath(account));
  }

  /**
   * What {@code reserve} and {@code settle} lock: the account's writer lock, through {@code
   * ReentrantMutex} and {@code NonReentrantMutex}. Curator's {@code InterProcessSemaphoreMutex}
   * keeps its nodes elsewhere and would not exclude the transfers' {@code InterProcessMutex}, so
   * with Curator both use {@code InterProcessMutex}.
   */
  LockPart accountPart(Operation operation, Library library, int account) {
    Recipe recipe =
        operation == Operation.SETTLE && library == Library.LOCKSTEP
            ? Recipe.NON_REENTRANT_MUTEX
            : Recipe.MUTEX;
    return new LockPart(recipe, lockPath(account));
  }

  Balance read(int account) throws SQLException {
    try (Connection connection = database.getConnection()) {
      return read(connection, List.of(account)).get(account);
    }
  }

  /** Every balance, in one statement. */
  List<Balance> readAll() throws SQLException {
    try (Connection connection = database.getConnection();
        Statement statement = connection.createStatement();
        ResultSet rows =
            statement.executeQuery("SELECT available, reserved FROM accounts ORDER BY id")) {
      List<Balance> balances = new ArrayList<>(accounts);
      while (rows.next()) {
        balances.add(new Balance(rows.getLong(1), rows.getLong(2)));
      }
      return balances;
    }
  }

  /** The account's version: how many writes it has had. */
  long version(int account) throws SQLException {
    try (Connection connection = database.getConnection();
        PreparedStatement select =
            connection.prepareStatement("SELECT version FROM accounts WHERE id = ?")) {
      select.setInt(1, account);
      try (ResultSet row = select.executeQuery()) {
        row.next();
        return row.getLong(1);
      }
    }
  }

  /** What became of a write. */
  enum Outcome {
    /** Committed. */
    COMMITTED,
    /** Nothing to write (too little money, nothing reserved): rolled back. */
    DECLINED,
    /** The database refused the writer's token: a newer holder had been admitted. */
    REFUSED,
    /** Never sent: the lock had already reported its loss. */
    SKIPPED
  }

  /**
   * A write's outcome, and the refusal when it was refused.
   *
   * @param outcome what became of it
   * @param refusal the database's refusal, or null
   */
  record Result(Outcome outcome, StaleFencingTokenException refusal) {
    static final Result SKIPPED = new Result(Outcome.SKIPPED, null);
  }

  /**
   * One fenced read-modify-write: admits {@code token} for the writer lock of each of {@code
   * accounts}, reads their balances, asks {@code change} for the new ones (empty: decline) and
   * writes them, in one transaction.
   *
   * @param token the writer's fencing token, or 0 for an unfenced write (Curator)
   */
  Result update(long token, List<Integer> accounts, UnaryOperator<Map<Integer, Balance>> change)
      throws SQLException {
    return transaction(
        token,
        accounts,
        connection -> {
          Map<Integer, Balance> updated = change.apply(read(connection, accounts));
          if (updated.isEmpty()) {
            return false;
          }
          write(connection, updated);
          return true;
        });
  }

  /**
   * A write prepared now and committed later, as a paused holder would: the balances it computed
   * from what it read, and the token it held then.
   */
  final class Prepared {
    private final long token;
    private final Map<Integer, Balance> balances;

    private Prepared(long token, Map<Integer, Balance> balances) {
      this.token = token;
      this.balances = Map.copyOf(balances);
    }

    /** The transaction: admits the token, writes the balances, commits. */
    Result commit() throws SQLException {
      return transaction(
          token,
          List.copyOf(balances.keySet()),
          connection -> {
            write(connection, balances);
            return true;
          });
    }
  }

  /** A write of {@code balances} with {@code token} (0: unfenced), to commit later. */
  Prepared prepare(long token, Map<Integer, Balance> balances) {
    return new Prepared(token, balances);
  }

  /** Whether the account's version moved past {@code version} within {@code timeout}. */
  boolean awaitWrite(int account, long version, Duration timeout)
      throws SQLException, InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (version(account) == version) {
      if (System.nanoTime() - deadline >= 0) {
        return false;
      }
      TimeUnit.MILLISECONDS.sleep(20); // a poll of the database, which has no change events
    }
    return true;
  }

  /** The body of a transaction: true to commit, false to roll back (declined). */
  @FunctionalInterface
  private interface Work {
    boolean run(Connection connection) throws SQLException;
  }

  /**
   * Runs {@code work} in a transaction that first admits {@code token} for the writer lock of each
   * account, in account order (so that two transactions never wait for each other's rows).
   */
  private Result transaction(long token, List<Integer> accounts, Work work) throws SQLException {
    try (Connection connection = database.getConnection()) {
      connection.setAutoCommit(false);
      try {
        if (token > 0) {
          for (int account : accounts.stream().sorted().distinct().toList()) {
            fence.admit(connection, lockPath(account), token);
          }
        }
        if (!work.run(connection)) {
          connection.rollback();
          return new Result(Outcome.DECLINED, null);
        }
        connection.commit();
        return new Result(Outcome.COMMITTED, null);
      } catch (StaleFencingTokenException stale) {
        connection.rollback();
        return new Result(Outcome.REFUSED, stale);
      } catch (SQLException | RuntimeException e) {
        connection.rollback();
        throw e;
      }
    }
  }

  private static Map<Integer, Balance> read(Connection connection, List<Integer> accounts)
      throws SQLException {
    Map<Integer, Balance> balances = new LinkedHashMap<>();
    try (PreparedStatement select =
        connection.prepareStatement("SELECT available, reserved FROM accounts WHERE id = ?")) {
      for (int account : accounts) {
        select.setInt(1, account);
        try (ResultSet row = select.executeQuery()) {
          row.next();
          balances.put(account, new Balance(row.getLong(1), row.getLong(2)));
        }
      }
    }
    return balances;
  }

  private static void write(Connection connection, Map<Integer, Balance> balances)
      throws SQLException {
    try (PreparedStatement update =
        connection.prepareStatement(
            "UPDATE accounts SET available = ?, reserved = ?, version = version + 1"
                + " WHERE id = ?")) {
      for (Map.Entry<Integer, Balance> balance : balances.entrySet()) {
        update.setLong(1, balance.getValue().available());
        update.setLong(2, balance.getValue().reserved());
        update.setInt(3, balance.getKey());
        update.executeUpdate();
      }
    }
  }

  /**
   * Drops the database, and deletes the lock directories of this bank from ZooKeeper (containers
   * too, but an earlier run's may not be reaped yet).
   */
  void close(CuratorFramework client) throws Exception {
    try (Connection connection = database.getConnection();
        Statement statement = connection.createStatement()) {
      statement.execute("SHUTDOWN");
    } finally {
      database.dispose();
      if (client.checkExists().forPath(root) != null) {
        client.delete().guaranteed().deletingChildrenIfNeeded().forPath(root);
      }
    }
  }

  /**
   * An account's money: what it may spend and what is set aside for pending payments. Only their
   * sum moves between accounts.
   *
   * @param available money the account may spend or send
   * @param reserved money set aside by {@code reserve} until {@code settle} returns it
   */
  record Balance(long available, long reserved) {
    long total() {
      return available + reserved;
    }

    boolean overdrawn() {
      return available < 0 || reserved < 0;
    }

    Balance plus(long amount) {
      return new Balance(available + amount, reserved);
    }

    /** Sets {@code amount} aside. */
    Balance reserve(long amount) {
      return new Balance(available - amount, reserved + amount);
    }

    /** Returns everything set aside. */
    Balance settle() {
      return new Balance(available + reserved, 0);
    }
  }
}
