package io.lockstep.recipes.fence;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.locks.LockHold;
import io.lockstep.recipes.locks.LockOwnershipLostException;
import io.lockstep.recipes.locks.LockState;
import io.lockstep.recipes.locks.ReentrantMutex;
import io.lockstep.testing.ZooKeeperExtension;
import io.lockstep.testkit.internal.Sessions;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What {@link JdbcFence} promises, on a real database: each subclass names one ({@link
 * JdbcFenceH2Test}, {@link JdbcFencePostgresTest}). The guarded data is a row of {@code orders}
 * that each writer sets to its own name and token; each committed writer also appends its token to
 * {@code commit_log} in the same transaction, whose identity column numbers the rows in the order
 * the writers held the fence's row lock, which they keep until they commit.
 */
@Timeout(60)
abstract class JdbcFenceContract {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  static final String ORDER = "order-17";
  static final String RESOURCE = "orders/17";

  private final List<ExecutorService> executors = new CopyOnWriteArrayList<>();
  DataSource dataSource;
  JdbcFence fence;

  /** This test's database, fresh and empty. */
  abstract DataSource database();

  /** How many sessions of this database wait for a lock now. */
  abstract int lockWaiters(Connection connection) throws SQLException;

  @BeforeEach
  void createTables() throws SQLException {
    dataSource = database();
    fence = JdbcFence.of(dataSource);
    fence.createTableIfMissing();
    try (Connection connection = dataSource.getConnection();
        Statement statement = connection.createStatement()) {
      statement.execute(
          "CREATE TABLE orders (id VARCHAR(64) PRIMARY KEY, state VARCHAR(64), token BIGINT)");
      statement.execute(
          "CREATE TABLE commit_log (seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
              + " token BIGINT NOT NULL)");
      statement.execute("INSERT INTO orders VALUES ('" + ORDER + "', 'new', 0)");
    }
  }

  @AfterEach
  void stopExecutors() {
    executors.forEach(ExecutorService::shutdownNow);
  }

  // ---- 1. admitted, then refused ----

  @Test
  void admitThenWrite_commits_andALowerTokenLater_isRefused_andItsWriteRolledBack()
      throws Exception {
    assertThat(write("paid", 20)).isTrue();

    try (Connection connection = transaction()) {
      update(connection, "refunded", 10); // written before admitting: the rollback takes it back
      assertThatThrownBy(() -> fence.admit(connection, RESOURCE, 10))
          .isInstanceOfSatisfying(
              StaleFencingTokenException.class,
              stale -> {
                assertThat(stale.resource()).isEqualTo(RESOURCE);
                assertThat(stale.token()).isEqualTo(10);
                assertThat(stale.highestAdmitted()).isEqualTo(20);
                assertThat(stale)
                    .hasMessageContaining("'" + RESOURCE + "'")
                    .hasMessageContaining(" 10 ")
                    .hasMessageContaining(" 20 ");
              });
      connection.rollback();
    }

    assertThat(order()).isEqualTo("paid@20");
    assertThat(fence.highestAdmitted(RESOURCE)).hasValue(20);
    assertThat(committedTokens()).containsExactly(20L);
  }

  // ---- 2. rolled back ----

  @Test
  void aRolledBackAdmission_leavesNoTrace_andALowerTokenIsAdmittedLater() throws Exception {
    assertThat(write("paid", 20)).isTrue();

    try (Connection connection = transaction()) {
      fence.admit(connection, RESOURCE, 30);
      update(connection, "shipped", 30);
      connection.rollback();
    }
    assertThat(fence.highestAdmitted(RESOURCE)).hasValue(20);
    assertThat(order()).isEqualTo("paid@20");

    assertThat(write("shipped", 25)).isTrue();
    assertThat(fence.highestAdmitted(RESOURCE)).hasValue(25);
    assertThat(order()).isEqualTo("shipped@25");
  }

  // ---- 3. the same holder again ----

  @Test
  void anEqualToken_isAdmittedAgain_inTheSameTransactionAndInTheNext() throws Exception {
    try (Connection connection = transaction()) {
      fence.admit(connection, RESOURCE, 20);
      fence.admit(connection, RESOURCE, 20);
      update(connection, "paid", 20);
      connection.commit();
    }
    assertThat(write("shipped", 20)).isTrue();

    assertThat(fence.highestAdmitted(RESOURCE)).hasValue(20);
    assertThat(order()).isEqualTo("shipped@20");
  }

  // ---- 4. concurrent holders commit in token order ----

  @Test
  void concurrentTransactions_commitInTokenOrder_andTheHighestTokensWriteWins() throws Exception {
    long seed = System.nanoTime();
    Random random = new Random(seed);
    int writers = 8;
    List<Long> tokens = new ArrayList<>();
    for (int i = 1; i <= writers; i++) {
      tokens.add(0x1_0000_0000L * 3 + i * 17L); // zxids of one epoch
    }
    Collections.shuffle(tokens, random);
    ExecutorService pool = executor(writers);
    CyclicBarrier start = new CyclicBarrier(writers);
    List<CompletableFuture<Boolean>> outcomes = new ArrayList<>();
    for (long token : tokens) {
      int before = random.nextInt(15);
      int held = random.nextInt(15);
      outcomes.add(
          CompletableFuture.supplyAsync(
              () -> {
                try {
                  start.await(10, TimeUnit.SECONDS);
                  return write("by-" + token, token, Duration.ofMillis(before), held);
                } catch (Exception e) {
                  throw new IllegalStateException(e);
                }
              },
              pool));
    }

    List<Long> admitted = new ArrayList<>();
    for (int i = 0; i < writers; i++) {
      // a writer that was refused saw StaleFencingTokenException, else the future failed
      if (outcomes.get(i).get(30, TimeUnit.SECONDS)) {
        admitted.add(tokens.get(i));
      }
    }
    long highest = Collections.max(tokens);
    assertThat(admitted).as("seed %d", seed).contains(highest);
    assertThat(order()).as("seed %d", seed).isEqualTo("by-" + highest + "@" + highest);
    assertThat(committedTokens())
        .as("tokens in commit order, seed %d", seed)
        .isSorted()
        .doesNotHaveDuplicates()
        .containsExactlyInAnyOrderElementsOf(admitted)
        .endsWith(highest);
    assertThat(fence.highestAdmitted(RESOURCE)).hasValue(highest);
  }

  // ---- 5. resources are independent ----

  @Test
  void twoResources_areIndependent_andOneDoesNotWaitForTheOther() throws Exception {
    try (Connection a = transaction()) {
      fence.admit(a, "orders/a", 50); // holds a's row until the end of this transaction
      CompletableFuture<Void> b =
          CompletableFuture.runAsync(
              () -> {
                try (Connection connection = transaction()) {
                  fence.admit(connection, "orders/b", 10);
                  connection.commit();
                } catch (SQLException e) {
                  throw new IllegalStateException(e);
                }
              },
              executor(1));
      b.get(10, TimeUnit.SECONDS);
      a.commit();
    }

    assertThat(fence.highestAdmitted("orders/a")).hasValue(50);
    assertThat(fence.highestAdmitted("orders/b")).hasValue(10);
    assertThat(fence.highestAdmitted("orders/c")).isEmpty();
    try (Connection connection = transaction()) {
      fence.admit(connection, "orders/b", 11);
      assertThatThrownBy(() -> fence.admit(connection, "orders/a", 49))
          .isInstanceOf(StaleFencingTokenException.class);
      connection.rollback();
    }
  }

  // ---- 6. two first admissions of a new resource ----

  @Test
  void aFirstAdmissionWaitingForAnotherUncommittedOne_isAdmittedAfterIt_withoutDuplicateKey()
      throws Exception {
    assertThat(racingFirstAdmissions(5, 6)).isTrue();
    assertThat(fence.highestAdmitted(RESOURCE)).hasValue(6);
  }

  @Test
  void aFirstAdmissionWaitingForAnotherUncommittedOne_isRefusedIfLower_withoutDuplicateKey()
      throws Exception {
    assertThat(racingFirstAdmissions(5, 4)).isFalse();
    assertThat(fence.highestAdmitted(RESOURCE)).hasValue(5);
  }

  @Test
  void aFirstAdmissionWaitingForAnotherThatRollsBack_insertsTheRow() throws Exception {
    ExecutorService pool = executor(1);
    try (Connection first = transaction()) {
      fence.admit(first, RESOURCE, 9);
      CompletableFuture<Boolean> second = admitAsync(RESOURCE, 7, pool);
      awaitLockWaiters(1);
      first.rollback();
      assertThat(second.get(10, TimeUnit.SECONDS)).isTrue();
    }
    assertThat(fence.highestAdmitted(RESOURCE)).hasValue(7);
  }

  @Test
  void simultaneousFirstAdmissions_neverFailWithADuplicateKey() throws Exception {
    ExecutorService pool = executor(2);
    for (int round = 0; round < 10; round++) {
      String resource = "race/" + round;
      CyclicBarrier start = new CyclicBarrier(2);
      List<CompletableFuture<Boolean>> both = new ArrayList<>();
      for (long token : new long[] {100 + round, 200 + round}) {
        both.add(
            CompletableFuture.supplyAsync(
                () -> {
                  try (Connection connection = transaction()) {
                    start.await(10, TimeUnit.SECONDS);
                    fence.admit(connection, resource, token);
                    connection.commit();
                    return true;
                  } catch (StaleFencingTokenException stale) {
                    return false;
                  } catch (Exception e) {
                    throw new IllegalStateException(e);
                  }
                },
                pool));
      }
      assertThat(both.get(1).get(10, TimeUnit.SECONDS)).as("round %d", round).isTrue();
      both.get(0).get(10, TimeUnit.SECONDS); // admitted or refused, never an SQLException
      assertThat(fence.highestAdmitted(resource)).hasValue(200 + round);
    }
  }

  // ---- 7. end to end: a paused holder's write is refused by the database ----

  @Test
  void aHolderWhoseSessionExpired_isRefused_afterTheNextHolderWrote() throws Exception {
    String path = zk.path("orders-17");
    CuratorFramework clientA = zk.newClient();
    ReentrantMutex lockA = new ReentrantMutex(clientA, path);
    ReentrantMutex lockB = new ReentrantMutex(zk.newClient(), path);
    LockHold holdA = lockA.hold();
    long tokenA = holdA.fencingToken(); // A takes its token, then is paused

    Sessions.expire(clientA, zk.server().getConnectString());
    try (LockHold holdB = lockB.tryHold(Duration.ofSeconds(20)).orElseThrow()) {
      assertThat(holdB.fencingToken()).isGreaterThan(tokenA);
      try (Connection connection = transaction()) {
        fence.admit(connection, RESOURCE, holdB);
        update(connection, "paid-by-B", holdB.fencingToken());
        log(connection, holdB.fencingToken());
        connection.commit();
      }

      // A resumes, still believing it holds the lock, and writes with the token it had
      try (Connection connection = transaction()) {
        update(connection, "paid-by-A", tokenA);
        log(connection, tokenA);
        assertThatThrownBy(() -> fence.admit(connection, RESOURCE, tokenA))
            .isInstanceOfSatisfying(
                StaleFencingTokenException.class,
                stale -> assertThat(stale.highestAdmitted()).isEqualTo(holdB.fencingToken()));
        connection.rollback();
      }
      assertThat(order()).isEqualTo("paid-by-B@" + holdB.fencingToken());
      assertThat(committedTokens()).containsExactly(holdB.fencingToken());
      assertThat(fence.highestAdmitted(RESOURCE)).hasValue(holdB.fencingToken());

      // once A's client has heard of the loss, its hold refuses to hand out the token at all
      await().atMost(Duration.ofSeconds(20)).until(() -> holdA.state() == LockState.LOST);
      try (Connection connection = transaction()) {
        assertThatThrownBy(() -> fence.admit(connection, RESOURCE, holdA))
            .isInstanceOf(LockOwnershipLostException.class);
        connection.rollback();
      }
    } finally {
      holdA.close();
    }
  }

  // ---- 8. arguments, the table ----

  @Test
  void badArguments_areRefused_namingTheArgument_andNothingIsWritten() throws Exception {
    try (Connection connection = transaction()) {
      assertThatThrownBy(() -> fence.admit(null, RESOURCE, 5))
          .isInstanceOf(NullPointerException.class)
          .hasMessage("connection");
      assertThatThrownBy(() -> fence.admit(connection, null, 5))
          .isInstanceOf(NullPointerException.class)
          .hasMessage("resource");
      assertThatThrownBy(() -> fence.admit(connection, " ", 5))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageStartingWith("resource");
      assertThatThrownBy(() -> fence.admit(connection, RESOURCE, 0))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageStartingWith("token");
      assertThatThrownBy(() -> fence.admit(connection, RESOURCE, -3))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageStartingWith("token");
      assertThatThrownBy(() -> fence.admit(connection, RESOURCE, (LockHold) null))
          .isInstanceOf(NullPointerException.class)
          .hasMessage("hold");
      assertThatThrownBy(() -> fence.highestAdmitted(null))
          .isInstanceOf(NullPointerException.class)
          .hasMessage("resource");
      assertThatThrownBy(() -> fence.highestAdmitted(""))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageStartingWith("resource");
      connection.commit();
    }
    try (Connection autoCommit = dataSource.getConnection()) {
      autoCommit.setAutoCommit(true);
      assertThatThrownBy(() -> fence.admit(autoCommit, RESOURCE, 5))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageStartingWith("connection is in auto-commit mode");
      assertThat(autoCommit.getAutoCommit()).isTrue();
    }
    assertThat(fenceRows("lockstep_fence")).isZero();
  }

  /**
   * A name longer than the table's column (255 characters in the default DDL) is refused before any
   * statement: on PostgreSQL the database's refusal would abort the caller's whole transaction.
   */
  @Test
  void aResourceTooLongForTheColumn_isRefused_namingIt_andTheTransactionGoesOn() throws Exception {
    String tooLong = "/locks/" + "x".repeat(249);
    String longest = "/locks/" + "x".repeat(248);
    try (Connection connection = transaction()) {
      update(connection, "paid", 20);

      assertThatThrownBy(() -> fence.admit(connection, tooLong, 20))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("resource")
          .hasMessageContaining("256")
          .hasMessageContaining("255");
      fence.admit(connection, longest, 20);
      fence.admit(connection, RESOURCE, 20);
      connection.commit();
    }
    assertThat(order()).isEqualTo("paid@20");
    assertThat(fence.highestAdmitted(longest)).hasValue(20);
    assertThat(fenceRows(JdbcFence.DEFAULT_TABLE)).isEqualTo(2);
  }

  @Test
  void admit_neitherCommitsNorChangesAutoCommit() throws Exception {
    try (Connection connection = transaction()) {
      fence.admit(connection, RESOURCE, 5);
      assertThat(connection.getAutoCommit()).isFalse();
      assertThat(fence.highestAdmitted(RESOURCE)).as("seen from another connection").isEmpty();
      connection.commit();
    }
    assertThat(fence.highestAdmitted(RESOURCE)).hasValue(5);
  }

  @Test
  void createTableIfMissing_twice_isHarmless_andKeepsTheTokens() throws Exception {
    assertThat(write("paid", 20)).isTrue();
    fence.createTableIfMissing();
    JdbcFence.of(dataSource).createTableIfMissing();

    assertThat(fence.highestAdmitted(RESOURCE)).hasValue(20);
  }

  @Test
  void aCustomTable_keepsItsOwnTokens_andASchemaQualifiedOneWorks() throws Exception {
    JdbcFence custom = JdbcFence.of(dataSource, "billing_fence");
    JdbcFence qualified = JdbcFence.of(dataSource, "public.qualified_fence");
    custom.createTableIfMissing();
    qualified.createTableIfMissing();
    assertThat(write("paid", 20)).isTrue();
    try (Connection connection = transaction()) {
      custom.admit(connection, RESOURCE, 7);
      qualified.admit(connection, RESOURCE, 8);
      connection.commit();
    }

    assertThat(custom.highestAdmitted(RESOURCE)).hasValue(7);
    assertThat(qualified.highestAdmitted(RESOURCE)).hasValue(8);
    assertThat(fence.highestAdmitted(RESOURCE)).hasValue(20);
    assertThat(fenceRows("billing_fence")).isOne();
    assertThat(custom).hasToString("JdbcFence[billing_fence]");
  }

  @Test
  void aBadTableName_isRefused_namingTheTable() {
    for (String bad :
        List.of(
            "",
            "1fence",
            "fence; DROP TABLE orders",
            "my-fence",
            "\"fence\"",
            "a.b.c",
            "fence.",
            "x".repeat(64))) {
      assertThatThrownBy(() -> JdbcFence.of(dataSource, bad))
          .as(bad)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageStartingWith("table");
    }
    assertThatThrownBy(() -> JdbcFence.of(dataSource, null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("table");
    assertThatThrownBy(() -> JdbcFence.of(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("dataSource");
  }

  @Test
  void aMissingTable_failsWithTheDriversSQLException_notAsStale() throws Exception {
    JdbcFence missing = JdbcFence.of(dataSource, "no_such_fence");
    try (Connection connection = transaction()) {
      assertThatThrownBy(() -> missing.admit(connection, RESOURCE, 5))
          .isInstanceOf(SQLException.class);
      connection.rollback();
    }
    assertThatThrownBy(() -> missing.highestAdmitted(RESOURCE)).isInstanceOf(SQLException.class);
  }

  // ---- helpers ----

  /** A connection in a transaction of its own; close it after commit or rollback. */
  Connection transaction() throws SQLException {
    Connection connection = dataSource.getConnection();
    connection.setAutoCommit(false);
    return connection;
  }

  /** Admits, writes, logs and commits: true if admitted, false if refused (rolled back). */
  boolean write(String state, long token) throws Exception {
    return write(state, token, Duration.ZERO, 0);
  }

  /**
   * One writer's transaction: waits {@code before} (other writers may admit meanwhile), admits,
   * writes, logs, holds the lock {@code heldMillis} longer, commits.
   */
  boolean write(String state, long token, Duration before, int heldMillis) throws Exception {
    try (Connection connection = transaction()) {
      try {
        // the sleeps wait for nothing: they shuffle the writers' timing (which admits first, how
        // long each holds the row) so that commits come in a random order of tokens
        Thread.sleep(before.toMillis());
        fence.admit(connection, RESOURCE, token);
        update(connection, state, token);
        log(connection, token);
        Thread.sleep(heldMillis);
        connection.commit();
        return true;
      } catch (StaleFencingTokenException stale) {
        assertThat(stale.token()).isEqualTo(token);
        assertThat(stale.highestAdmitted()).isGreaterThan(token);
        connection.rollback();
        return false;
      } catch (Exception e) {
        connection.rollback();
        throw e;
      }
    }
  }

  /**
   * Two first admissions of {@link #RESOURCE}: the second starts while the first has inserted the
   * row without committing, and waits for it; then the first commits. Whether the second was
   * admitted.
   */
  private boolean racingFirstAdmissions(long first, long second) throws Exception {
    ExecutorService pool = executor(1);
    try (Connection connection = transaction()) {
      fence.admit(connection, RESOURCE, first);
      CompletableFuture<Boolean> waiting = admitAsync(RESOURCE, second, pool);
      awaitLockWaiters(1);
      connection.commit();
      return waiting.get(10, TimeUnit.SECONDS);
    }
  }

  private CompletableFuture<Boolean> admitAsync(String resource, long token, ExecutorService pool) {
    CountDownLatch started = new CountDownLatch(1);
    CompletableFuture<Boolean> admitted =
        CompletableFuture.supplyAsync(
            () -> {
              try (Connection connection = transaction()) {
                started.countDown();
                try {
                  fence.admit(connection, resource, token);
                  connection.commit();
                  return true;
                } catch (StaleFencingTokenException stale) {
                  connection.rollback();
                  return false;
                }
              } catch (SQLException e) {
                throw new IllegalStateException(e);
              }
            },
            pool);
    await().atMost(Duration.ofSeconds(10)).until(() -> started.getCount() == 0);
    return admitted;
  }

  private void awaitLockWaiters(int count) {
    await("a transaction waiting for the fence's row lock")
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> {
              try (Connection connection = dataSource.getConnection()) {
                return lockWaiters(connection) >= count;
              }
            });
  }

  private ExecutorService executor(int threads) {
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    executors.add(pool);
    return pool;
  }

  static void update(Connection connection, String state, long token) throws SQLException {
    try (PreparedStatement update =
        connection.prepareStatement("UPDATE orders SET state = ?, token = ? WHERE id = ?")) {
      update.setString(1, state);
      update.setLong(2, token);
      update.setString(3, ORDER);
      assertThat(update.executeUpdate()).isOne();
    }
  }

  static void log(Connection connection, long token) throws SQLException {
    try (PreparedStatement insert =
        connection.prepareStatement("INSERT INTO commit_log (token) VALUES (?)")) {
      insert.setLong(1, token);
      insert.executeUpdate();
    }
  }

  /** The order's state and the token of its writer, as {@code state@token}. */
  String order() throws SQLException {
    try (Connection connection = dataSource.getConnection();
        PreparedStatement select =
            connection.prepareStatement("SELECT state, token FROM orders WHERE id = ?")) {
      select.setString(1, ORDER);
      try (ResultSet row = select.executeQuery()) {
        assertThat(row.next()).isTrue();
        return row.getString(1) + "@" + row.getLong(2);
      }
    }
  }

  /** The tokens of the committed writers, in the order they held the fence's row. */
  List<Long> committedTokens() throws SQLException {
    List<Long> tokens = new ArrayList<>();
    try (Connection connection = dataSource.getConnection();
        Statement statement = connection.createStatement();
        ResultSet rows = statement.executeQuery("SELECT token FROM commit_log ORDER BY seq")) {
      while (rows.next()) {
        tokens.add(rows.getLong(1));
      }
    }
    return tokens;
  }

  long fenceRows(String table) throws SQLException {
    try (Connection connection = dataSource.getConnection();
        Statement statement = connection.createStatement();
        ResultSet rows = statement.executeQuery("SELECT COUNT(*) FROM " + table)) {
      rows.next();
      return rows.getLong(1);
    }
  }
}
