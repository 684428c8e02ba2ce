package io.lockstep.recipes.fence.http;

import io.lockstep.recipes.fence.JdbcFence;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.apache.catalina.Context;
import org.apache.catalina.LifecycleException;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;
import org.apache.tomcat.util.descriptor.web.FilterDef;
import org.apache.tomcat.util.descriptor.web.FilterMap;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * A service that owns an {@code orders} table, on a real embedded Tomcat on a free port of the
 * loopback address, with a {@link FencingFilter} (or any filter) before its handler.
 *
 * <p>The handler, {@code POST /orders/{id}?state=S[&fail=throw|500|409]}, sets the order's state
 * and token (the token header's, or 0) with a {@link JdbcTemplate} on the service's data source, as
 * a Spring service would; then, if told, fails: throws, or answers 500 or 409 itself. It answers
 * {@code ok S in the fence's transaction} when its write ran in a transaction the filter began.
 * With {@code &async=true} it starts async processing instead (the servlet and the filter support
 * it) and writes on the container's async thread once {@link #asyncWriteMayGo} is released.
 */
final class OrdersService implements AutoCloseable {
  static final String ORDER = "order-17";

  final DataSource dataSource;
  final JdbcFence fence;

  /** Requests that reached the handler. */
  final AtomicInteger handled = new AtomicInteger();

  /** An async handler's write waits for this. */
  final CountDownLatch asyncWriteMayGo = new CountDownLatch(1);

  /**
   * What became of an async handler's write: "wrote S" once it ran, or "refused: ..." if the
   * handler could not start async processing.
   */
  final CompletableFuture<String> asyncWrite = new CompletableFuture<>();

  private final Tomcat tomcat;
  private final int port;

  private OrdersService(DataSource dataSource, JdbcFence fence, Tomcat tomcat, int port) {
    this.dataSource = dataSource;
    this.fence = fence;
    this.tomcat = tomcat;
    this.port = port;
  }

  /** Creates the tables in {@code dataSource} (fresh) and starts the service. */
  static OrdersService start(DataSource dataSource, Path baseDir, FencingFilter.Builder filter)
      throws SQLException, LifecycleException {
    JdbcFence fence = JdbcFence.of(dataSource);
    fence.createTableIfMissing();
    try (Connection connection = dataSource.getConnection();
        Statement statement = connection.createStatement()) {
      statement.execute(
          "CREATE TABLE orders (id VARCHAR(64) PRIMARY KEY, state VARCHAR(64), token BIGINT)");
      statement.execute("INSERT INTO orders VALUES ('" + ORDER + "', 'new', 0)");
    }
    return start(dataSource, fence, baseDir, filter.fence(fence).build());
  }

  private static OrdersService start(
      DataSource dataSource, JdbcFence fence, Path baseDir, Filter filter)
      throws LifecycleException {
    Tomcat tomcat = new Tomcat();
    tomcat.setBaseDir(baseDir.toString());
    Connector connector = new Connector();
    connector.setPort(0);
    connector.setProperty("address", "127.0.0.1");
    tomcat.setConnector(connector);
    Context context = tomcat.addContext("", baseDir.toString());
    OrdersService[] service = new OrdersService[1];
    Tomcat.addServlet(
            context,
            "orders",
            new HttpServlet() {
              private static final long serialVersionUID = 1L;

              @Override
              protected void doPost(HttpServletRequest request, HttpServletResponse response)
                  throws IOException {
                service[0].handle(request, response);
              }
            })
        .setAsyncSupported(true);
    context.addServletMappingDecoded("/orders/*", "orders");
    FilterDef definition = new FilterDef();
    definition.setFilterName("fencing");
    definition.setFilter(filter);
    definition.setAsyncSupported("true");
    context.addFilterDef(definition);
    FilterMap mapping = new FilterMap();
    mapping.setFilterName("fencing");
    mapping.addURLPattern("/*");
    context.addFilterMap(mapping);
    tomcat.start();
    service[0] = new OrdersService(dataSource, fence, tomcat, connector.getLocalPort());
    return service[0];
  }

  private void handle(HttpServletRequest request, HttpServletResponse response) throws IOException {
    handled.incrementAndGet();
    String id = request.getPathInfo().substring(1);
    String state = request.getParameter("state");
    String token = request.getHeader(FencingHeaders.TOKEN);
    if (request.getParameter("async") != null) {
      handleAsync(request, state, token == null ? 0 : Long.parseLong(token));
      return;
    }
    boolean inTransaction = TransactionSynchronizationManager.isActualTransactionActive();
    new JdbcTemplate(dataSource)
        .update(
            "UPDATE orders SET state = ?, token = ? WHERE id = ?",
            state,
            token == null ? 0 : Long.parseLong(token),
            id);
    String fail = request.getParameter("fail");
    if ("throw".equals(fail)) {
      throw new IllegalStateException("the handler failed after writing " + state);
    }
    if (fail != null) {
      response.setStatus(Integer.parseInt(fail));
    }
    response.setContentType("text/plain");
    response
        .getWriter()
        .print(
            "ok "
                + state
                + (inTransaction ? " in the fence's transaction" : " outside a transaction"));
  }

  private void handleAsync(HttpServletRequest request, String state, long token) {
    AsyncContext async;
    try {
      async = request.startAsync();
    } catch (IllegalStateException refused) {
      asyncWrite.complete("refused: " + refused.getMessage());
      throw refused;
    }
    async.start(
        () -> {
          try {
            if (!asyncWriteMayGo.await(20, TimeUnit.SECONDS)) {
              throw new IllegalStateException("not released");
            }
            new JdbcTemplate(dataSource)
                .update("UPDATE orders SET state = ?, token = ? WHERE id = ?", state, token, ORDER);
            asyncWrite.complete("wrote " + state);
          } catch (InterruptedException | RuntimeException e) {
            asyncWrite.completeExceptionally(e);
          } finally {
            async.complete();
          }
        });
  }

  URI uri(String path) {
    return URI.create("http://127.0.0.1:" + port + path);
  }

  /** The order's state and token, as {@code state@token}, as committed. */
  String order() {
    return new JdbcTemplate(dataSource)
        .queryForObject(
            "SELECT state, token FROM orders WHERE id = ?",
            (row, n) -> row.getString(1) + "@" + row.getLong(2),
            ORDER);
  }

  @Override
  public void close() throws LifecycleException {
    tomcat.stop();
    tomcat.destroy();
  }
}
