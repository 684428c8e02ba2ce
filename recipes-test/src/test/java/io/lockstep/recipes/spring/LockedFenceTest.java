package io.lockstep.recipes.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.recipes.fence.JdbcFence;
import io.lockstep.recipes.fence.StaleFencingTokenException;
import io.lockstep.recipes.locks.LockHold;
import io.lockstep.testkit.Fault;
import io.lockstep.testkit.LockstepZooKeeper;
import java.time.Duration;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import javax.sql.DataSource;
import org.apache.curator.framework.CuratorFramework;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;

/**
 * {@code @Locked(fence = ...)}: the call's token is admitted by the database in the method's own
 * transaction, so a holder that lost its lock without knowing it is refused by the database once a
 * newer holder wrote, and its write never commits. Two instances (two contexts, two ZooKeeper
 * clients) share one H2 database, as two service instances share theirs.
 */
@Timeout(90)
class LockedFenceTest {
  @RegisterExtension static final LockstepZooKeeper zk = LockstepZooKeeper.server();
  private static final AtomicInteger databases = new AtomicInteger();

  /** Credits the ledger under its lock, fenced in the database. */
  static class Ledger {
    private final JdbcTemplate jdbc;

    Ledger(JdbcTemplate jdbc) {
      this.jdbc = jdbc;
    }

    @Locked(key = "'ledger'", fence = "'ledger'")
    public void credit(int amount) {
      jdbc.update("UPDATE account SET balance = balance + ?", amount);
    }

    @Locked(key = "'ledger'", fence = "'ledger'")
    public void creditThenFail(int amount) {
      jdbc.update("UPDATE account SET balance = balance + ?", amount);
      throw new IllegalStateException("the method failed after its write");
    }
  }

  /** Holds the ledger's lock (unfenced) while it pauses, then credits it (fenced, nested). */
  static class Batch {
    private final Ledger ledger;

    Batch(Ledger ledger) {
      this.ledger = ledger;
    }

    @Locked(key = "'ledger'")
    public void run(Runnable pause, int amount) {
      pause.run();
      ledger.credit(amount);
    }
  }

  @Configuration(proxyBeanMethods = false)
  @EnableLockstepLocking
  static class Config {
    @Bean
    LockstepLockRegistry registry(CuratorFramework client) {
      return new LockstepLockRegistry(client, "/fenced-ledger");
    }

    @Bean
    PlatformTransactionManager transactions(DataSource dataSource) {
      return new DataSourceTransactionManager(dataSource);
    }

    @Bean
    Ledger ledger(DataSource dataSource) {
      return new Ledger(new JdbcTemplate(dataSource));
    }

    @Bean
    Batch batch(Ledger ledger) {
      return new Batch(ledger);
    }
  }

  private JdbcDataSource dataSource;
  private JdbcTemplate jdbc;
  private CuratorFramework clientA;
  private AnnotationConfigApplicationContext instanceA;
  private AnnotationConfigApplicationContext instanceB;

  @BeforeEach
  void start() throws Exception {
    dataSource = new JdbcDataSource();
    dataSource.setURL("jdbc:h2:mem:ledger" + databases.incrementAndGet() + ";DB_CLOSE_DELAY=-1");
    jdbc = new JdbcTemplate(dataSource);
    jdbc.execute("CREATE TABLE account (balance INT NOT NULL)");
    jdbc.update("INSERT INTO account VALUES (0)");
    JdbcFence.of(dataSource).createTableIfMissing();
    clientA = zk.newClient();
    instanceA = instance(clientA);
    instanceB = instance(zk.newClient());
  }

  @AfterEach
  void stop() {
    instanceA.close();
    instanceB.close();
    jdbc.execute("SHUTDOWN");
  }

  private AnnotationConfigApplicationContext instance(CuratorFramework client) {
    AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
    context.registerBean(CuratorFramework.class, () -> client);
    context.registerBean(DataSource.class, () -> dataSource);
    context.register(Config.class);
    context.refresh();
    return context;
  }

  private int balance() {
    return jdbc.queryForObject("SELECT balance FROM account", Integer.class);
  }

  @Test
  void aFencedCall_admitsItsToken_andItsWriteCommitsWithIt() throws Exception {
    instanceA.getBean(Ledger.class).credit(5);
    instanceB.getBean(Ledger.class).credit(7);

    assertThat(balance()).isEqualTo(12);
    OptionalLong admitted = JdbcFence.of(dataSource).highestAdmitted("ledger");
    assertThat(admitted).isPresent();
    assertThat(admitted.getAsLong()).isPositive();
  }

  @Test
  void aMethodThatThrows_rollsItsAdmissionBackWithItsWrite() throws Exception {
    Ledger ledger = instanceA.getBean(Ledger.class);

    assertThatThrownBy(() -> ledger.creditThenFail(5))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("failed after its write");

    assertThat(balance()).isZero();
    assertThat(JdbcFence.of(dataSource).highestAdmitted("ledger")).isEmpty();
  }

  @Test
  void aHolderThatLostItsLockUnknowingly_isRefusedByTheDatabase_afterTheNextHolderWrote()
      throws Exception {
    AtomicReference<LockHold> heldByA = new AtomicReference<>();
    CountDownLatch paused = new CountDownLatch(1);
    CountDownLatch resume = new CountDownLatch(1);
    Runnable pause =
        () -> {
          heldByA.set(LockedCall.current());
          paused.countDown();
          try {
            resume.await(); // a long GC pause, say
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        };
    CompletableFuture<Void> batchA =
        CompletableFuture.runAsync(() -> instanceA.getBean(Batch.class).run(pause, 100));
    assertThat(paused.await(20, TimeUnit.SECONDS)).isTrue();

    // A is cut off (it hears nothing), and the server ends its session: A does not know
    try (Fault cutOff = zk.faults().silence(clientA, Duration.ofMinutes(1))) {
      zk.faults().expireSessionOf(heldByA.get());
      instanceB.getBean(Ledger.class).credit(1); // the next holder writes

      resume.countDown(); // A wakes and writes with its old token

      assertThatThrownBy(() -> batchA.get(30, TimeUnit.SECONDS))
          .isInstanceOf(ExecutionException.class)
          .hasCauseInstanceOf(StaleFencingTokenException.class);
    }
    assertThat(balance()).as("only the next holder's write").isEqualTo(1);
    zk.skipLeftoverCheck(); // A's client has a session to find again after the silence
  }
}
