package io.lockstep.recipes.spring;

import io.lockstep.recipes.fence.JdbcFence;
import io.lockstep.recipes.locks.LockException;
import io.lockstep.recipes.locks.LockHold;
import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The database half of a {@code @Locked(fence = ...)} call: a transaction around the method (or the
 * one under way, joined) whose first statement admits the call's token through {@link JdbcFence},
 * on the connection the method's own JDBC work gets from Spring ({@link DataSourceUtils}), so that
 * the admission commits or rolls back with the method's writes. Loaded only for fenced methods:
 * spring-jdbc is then on the class path.
 */
final class LockedFence {
  private final DataSource dataSource;
  private final JdbcFence fence;
  private final TransactionTemplate transactions;

  private LockedFence(DataSource dataSource, JdbcFence fence, PlatformTransactionManager manager) {
    this.dataSource = dataSource;
    this.fence = fence;
    this.transactions = new TransactionTemplate(manager); // REQUIRED: an outer one is joined
  }

  /** The context's data source, its fence (or one on the default table) and its transactions. */
  static LockedFence of(BeanFactory beans) {
    DataSource dataSource = beans.getBean(DataSource.class);
    JdbcFence fence =
        beans.getBeanProvider(JdbcFence.class).getIfAvailable(() -> JdbcFence.of(dataSource));
    PlatformTransactionManager manager =
        beans
            .getBeanProvider(PlatformTransactionManager.class)
            .getIfAvailable(() -> new DataSourceTransactionManager(dataSource));
    return new LockedFence(dataSource, fence, manager);
  }

  /**
   * Admits {@code hold}'s token for {@code resource}, then calls the method, in one transaction:
   * committed when the method returns, rolled back when it throws (anything) or the token is stale
   * (then the method is not called).
   */
  Object call(String resource, LockHold hold, MethodInvocation invocation) throws Throwable {
    try {
      return transactions.execute(
          status -> {
            admit(resource, hold);
            try {
              return invocation.proceed();
            } catch (RuntimeException | Error e) {
              throw e;
            } catch (Throwable checked) {
              throw new Carried(checked); // rolls back, and is unwrapped below
            }
          });
    } catch (Carried carried) {
      throw carried.getCause();
    }
  }

  private void admit(String resource, LockHold hold) {
    Connection connection = DataSourceUtils.getConnection(dataSource);
    try {
      fence.admit(connection, resource, hold);
    } catch (SQLException e) {
      throw new LockException(
          "Could not admit the fencing token of " + hold.path() + " for " + resource + ": " + e, e);
    } finally {
      DataSourceUtils.releaseConnection(connection, dataSource);
    }
  }

  /** A checked exception of the method, carried through the transaction's callback. */
  private static final class Carried extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Carried(Throwable cause) {
      super(cause);
    }
  }
}
