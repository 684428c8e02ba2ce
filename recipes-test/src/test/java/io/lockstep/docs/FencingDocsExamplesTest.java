package io.lockstep.docs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.recipes.fence.JdbcFence;
import io.lockstep.recipes.fence.StaleFencingTokenException;
import io.lockstep.recipes.fence.http.FencingClientInterceptor;
import io.lockstep.recipes.fence.http.FencingExchangeFilter;
import io.lockstep.recipes.fence.http.FencingFilter;
import io.lockstep.recipes.fence.http.FencingHeaders;
import io.lockstep.recipes.locks.LockHold;
import io.lockstep.recipes.locks.ReentrantMutex;
import io.lockstep.recipes.spring.EnableLockstepLocking;
import io.lockstep.recipes.spring.Locked;
import io.lockstep.recipes.spring.LockstepLockRegistry;
import io.lockstep.testing.ZooKeeperExtension;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.OptionalLong;
import javax.sql.DataSource;
import org.apache.catalina.Context;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;
import org.apache.curator.framework.CuratorFramework;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.client.reactive.JdkClientHttpConnector;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.stereotype.Service;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.RestClient;
import org.springframework.web.context.support.AnnotationConfigWebApplicationContext;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.servlet.DispatcherServlet;
import org.springframework.web.servlet.config.annotation.EnableWebMvc;

/**
 * The examples of docs/fencing.md, run against a real ZooKeeper server and an H2 database (the
 * fence itself is tested on H2 and PostgreSQL by {@code io.lockstep.recipes.fence}'s tests); the
 * HTTP examples against a Spring MVC service on a real embedded Tomcat, its filter registered by
 * Spring Boot's {@code FilterRegistrationBean}.
 */
@Timeout(60)
class FencingDocsExamplesTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  // ---- docs/fencing.md ----

  @Test
  void fencing_aHoldAdmitsItsTokenAndWrites_inOneTransaction() throws Exception {
    DataSource database = ordersDatabase();

    // docs/fencing.md: the table
    // import io.lockstep.recipes.fence.JdbcFence;
    // import javax.sql.DataSource;

    DataSource dataSource = database; // docs: ... the application's database (a connection pool)
    JdbcFence fence = JdbcFence.of(dataSource); // the table lockstep_fence
    fence.createTableIfMissing(); // or create it with your migrations, below
    // docs: end

    // docs/fencing.md: a fenced write
    // import io.lockstep.recipes.locks.LockHold;
    // import io.lockstep.recipes.locks.ReentrantMutex;
    // import java.sql.Connection;
    // import java.sql.PreparedStatement;
    // import java.sql.SQLException;
    // import org.apache.curator.framework.CuratorFramework;

    CuratorFramework client = zk.newClient(); // docs: ... a started client
    ReentrantMutex lock = new ReentrantMutex(client, "/locks/orders/17");
    try (LockHold hold = lock.hold();
        Connection connection = dataSource.getConnection()) {
      connection.setAutoCommit(false);
      try {
        fence.admit(connection, "/locks/orders/17", hold); // refused if a newer holder wrote
        try (PreparedStatement paid =
            connection.prepareStatement("UPDATE orders SET state = 'paid' WHERE id = ?")) {
          paid.setLong(1, 17);
          paid.executeUpdate();
        }
        connection.commit(); // the admission and the write commit together, or neither does
      } catch (SQLException | RuntimeException e) {
        connection.rollback(); // stale (a newer holder wrote) or failed: none of it lands
        throw e;
      }
    }
    // docs: end
    assertThat(state(dataSource)).isEqualTo("paid");

    // docs/fencing.md: highest admitted
    // import java.util.OptionalLong;

    OptionalLong newest = fence.highestAdmitted("/locks/orders/17"); // committed admissions only
    // docs: end
    assertThat(newest).isPresent();
    assertThat(newest.getAsLong()).isPositive();

    // an older token than the one admitted is refused: the page's story, in a few lines
    try (Connection connection = dataSource.getConnection()) {
      connection.setAutoCommit(false);
      assertThatThrownBy(() -> fence.admit(connection, "/locks/orders/17", newest.getAsLong() - 1))
          .isInstanceOf(StaleFencingTokenException.class)
          .hasMessageContaining("/locks/orders/17");
      connection.rollback();
    }
  }

  // ---- docs/fencing.md: HTTP ----

  // docs/fencing.md: a fenced locked method
  // import io.lockstep.recipes.spring.Locked;
  // import org.springframework.jdbc.core.JdbcTemplate;

  static class OrderBook {
    private final JdbcTemplate jdbc;

    OrderBook(JdbcTemplate jdbc) {
      this.jdbc = jdbc;
    }

    // the call's token is admitted for the order in the method's transaction, before the update
    @Locked(key = "'orders/' + #id", fence = "'orders/' + #id")
    public void markShipped(long id) {
      jdbc.update("UPDATE orders SET state = 'shipped' WHERE id = ?", id);
    }
  }

  // docs: end

  /** The context of the fenced locked method: Lockstep's locking, a database, its transactions. */
  @Configuration(proxyBeanMethods = false)
  @EnableLockstepLocking
  static class OrderBookConfig {
    @Bean
    LockstepLockRegistry registry(CuratorFramework client) {
      return new LockstepLockRegistry(client, "/order-book");
    }

    @Bean
    DataSourceTransactionManager transactions(DataSource dataSource) {
      return new DataSourceTransactionManager(dataSource);
    }

    @Bean
    OrderBook orderBook(DataSource dataSource) {
      return new OrderBook(new JdbcTemplate(dataSource));
    }
  }

  @Test
  void fencing_aLockedMethodNamesItsFence_andItsTokenIsAdmittedWithItsWrite() throws Exception {
    DataSource database = ordersDatabase("fencing-docs-locked");
    JdbcFence.of(database).createTableIfMissing();
    CuratorFramework client = zk.newClient();
    try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext()) {
      context.registerBean(CuratorFramework.class, () -> client);
      context.registerBean(DataSource.class, () -> database);
      context.register(OrderBookConfig.class);
      context.refresh();

      context.getBean(OrderBook.class).markShipped(17);
    }

    assertThat(state(database)).isEqualTo("shipped");
    assertThat(JdbcFence.of(database).highestAdmitted("orders/17")).isPresent();
  }

  // docs/fencing.md: the service's filter
  // import io.lockstep.recipes.fence.JdbcFence;
  // import io.lockstep.recipes.fence.http.FencingFilter;
  // import java.sql.SQLException;
  // import javax.sql.DataSource;
  // import org.springframework.boot.web.servlet.FilterRegistrationBean;
  // import org.springframework.context.annotation.Bean;

  @Bean
  FilterRegistrationBean<FencingFilter> fencingFilter(DataSource dataSource) throws SQLException {
    JdbcFence.of(dataSource).createTableIfMissing(); // or with your migrations
    FilterRegistrationBean<FencingFilter> fencing =
        new FilterRegistrationBean<>(FencingFilter.of(dataSource));
    fencing.addUrlPatterns("/orders/*"); // the endpoints that write the guarded data
    return fencing;
  }

  // docs: end

  // docs/fencing.md: the service's handler
  // import org.springframework.jdbc.core.JdbcTemplate;
  // import org.springframework.web.bind.annotation.PathVariable;
  // import org.springframework.web.bind.annotation.PostMapping;
  // import org.springframework.web.bind.annotation.RestController;

  @RestController
  static class OrdersController {
    private final JdbcTemplate jdbc; // on the filter's DataSource

    OrdersController(JdbcTemplate jdbc) {
      this.jdbc = jdbc;
    }

    @PostMapping("/orders/{id}/paid")
    String pay(@PathVariable long id) {
      // in the filter's transaction: commits with the admission, or not at all
      jdbc.update("UPDATE orders SET state = 'paid' WHERE id = ?", id);
      return "paid";
    }
  }

  // docs: end

  // docs/fencing.md: a locked method calls the service
  // import io.lockstep.recipes.spring.Locked;
  // import org.springframework.stereotype.Service;

  @Service
  static class Payments {
    private final RestClient orders; // with the FencingClientInterceptor, as above

    Payments(RestClient orders) {
      this.orders = orders;
    }

    @Locked(key = "'orders/' + #orderId") // the lock /locks/orders/17: the resource's name
    public void pay(String orderId) {
      orders.post().uri("/orders/{id}/paid", orderId).retrieve().toBodilessEntity();
    }
  }

  // docs: end

  @Configuration(proxyBeanMethods = false)
  @EnableWebMvc
  static class Mvc {}

  @Configuration(proxyBeanMethods = false)
  @EnableLockstepLocking
  static class Locking {
    @Bean
    LockstepLockRegistry lockRegistry(CuratorFramework client) {
      return new LockstepLockRegistry(client, "/locks");
    }
  }

  @Test
  void fencing_http_aServiceAdmitsTheCallersToken_withItsWrite_andRefusesAStaleOne(
      @TempDir Path tomcatDir) throws Exception {
    DataSource dataSource = ordersDatabase("fencing-http-docs");
    Tomcat tomcat = orderService(dataSource, tomcatDir);
    try {
      CuratorFramework client = zk.newClient();
      ReentrantMutex lock = new ReentrantMutex(client, "/locks/orders/17");
      long earlierToken;
      try (LockHold earlier = lock.hold()) {
        earlierToken = earlier.fencingToken();
      }

      // docs/fencing.md: a client with a hold per request
      // import io.lockstep.recipes.fence.StaleFencingTokenException;
      // import io.lockstep.recipes.fence.http.FencingClientInterceptor;
      // import io.lockstep.recipes.fence.http.FencingHeaders;
      // import org.springframework.web.client.RestClient;

      String ordersUrl = url(tomcat); // docs: ... the orders service: "http://orders.internal"
      RestClient orders =
          RestClient.builder()
              .baseUrl(ordersUrl)
              .requestInterceptor(new FencingClientInterceptor())
              .build();
      try (LockHold hold = lock.hold()) {
        orders
            .post()
            .uri("/orders/17/paid")
            .attributes(FencingHeaders.heldBy(hold)) // its token, for the lock's path
            .retrieve()
            .toBodilessEntity();
      } catch (StaleFencingTokenException stale) {
        // 409: a newer holder has written; nothing of this request was done
      }
      // docs: end
      assertThat(state(dataSource)).isEqualTo("paid");
      long newest = JdbcFence.of(dataSource).highestAdmitted("/locks/orders/17").orElseThrow();
      assertThat(newest).isGreaterThan(earlierToken);

      // a paused holder with the earlier token, as any client sends it: 409, nothing written
      try (Connection connection = dataSource.getConnection();
          Statement statement = connection.createStatement()) {
        statement.execute("UPDATE orders SET state = 'new' WHERE id = 17");
      }
      HttpResponse<String> refused =
          HttpClient.newHttpClient()
              .send(
                  HttpRequest.newBuilder(URI.create(ordersUrl + "/orders/17/paid"))
                      .header(FencingHeaders.TOKEN, Long.toString(earlierToken))
                      .header(FencingHeaders.RESOURCE, "/locks/orders/17")
                      .POST(HttpRequest.BodyPublishers.noBody())
                      .build(),
                  HttpResponse.BodyHandlers.ofString());
      assertThat(refused.statusCode()).isEqualTo(409);
      assertThat(refused.body())
          .contains("\"type\":\"urn:lockstep:fencing:stale-token\"")
          .contains("\"highestAdmitted\":" + newest);
      assertThat(state(dataSource)).isEqualTo("new");

      // docs/fencing.md: a WebClient
      // import io.lockstep.recipes.fence.http.FencingExchangeFilter;
      // import org.springframework.http.client.reactive.JdkClientHttpConnector;
      // import org.springframework.web.reactive.function.client.WebClient;

      WebClient reactiveOrders =
          WebClient.builder()
              .baseUrl(ordersUrl)
              .clientConnector(new JdkClientHttpConnector()) // or any connector
              .filter(new FencingExchangeFilter())
              .build();
      try (LockHold hold = lock.hold()) {
        reactiveOrders
            .post()
            .uri("/orders/17/paid")
            .attributes(FencingHeaders.heldBy(hold))
            .retrieve()
            .toBodilessEntity()
            .block();
      }
      // docs: end
      assertThat(state(dataSource)).isEqualTo("paid");
      assertThat(JdbcFence.of(dataSource).highestAdmitted("/locks/orders/17").orElseThrow())
          .isGreaterThan(newest);

      // the @Locked method: its call's hold, for its lock's path
      try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext()) {
        context.registerBean(CuratorFramework.class, () -> client);
        context.registerBean(RestClient.class, () -> orders);
        context.register(Locking.class, Payments.class);
        context.refresh();
        long before = JdbcFence.of(dataSource).highestAdmitted("/locks/orders/17").orElseThrow();

        context.getBean(Payments.class).pay("17");

        assertThat(JdbcFence.of(dataSource).highestAdmitted("/locks/orders/17").orElseThrow())
            .isGreaterThan(before);
      }
    } finally {
      tomcat.stop();
      tomcat.destroy();
    }
  }

  private static String url(Tomcat tomcat) {
    return "http://127.0.0.1:" + tomcat.getConnector().getLocalPort();
  }

  /**
   * The orders service of the HTTP examples: Spring MVC with {@link OrdersController} behind the
   * filter of {@link #fencingFilter}, registered as Spring Boot registers it, on a real Tomcat.
   */
  private Tomcat orderService(DataSource dataSource, Path baseDir) throws Exception {
    Tomcat tomcat = new Tomcat();
    tomcat.setBaseDir(baseDir.toString());
    Connector connector = new Connector();
    connector.setPort(0);
    connector.setProperty("address", "127.0.0.1");
    tomcat.setConnector(connector);
    Context context = tomcat.addContext("", baseDir.toString());
    AnnotationConfigWebApplicationContext web = new AnnotationConfigWebApplicationContext();
    web.addBeanFactoryPostProcessor(
        beans -> beans.registerSingleton("jdbcTemplate", new JdbcTemplate(dataSource)));
    web.register(Mvc.class, OrdersController.class);
    Tomcat.addServlet(context, "dispatcher", new DispatcherServlet(web));
    context.addServletMappingDecoded("/", "dispatcher");
    FilterRegistrationBean<FencingFilter> fencing = fencingFilter(dataSource);
    context.addServletContainerInitializer(
        (classes, servletContext) -> fencing.onStartup(servletContext), null);
    tomcat.start();
    return tomcat;
  }

  private static DataSource ordersDatabase() throws SQLException {
    return ordersDatabase("fencing-docs");
  }

  private static DataSource ordersDatabase(String name) throws SQLException {
    JdbcDataSource h2 = new JdbcDataSource();
    h2.setURL("jdbc:h2:mem:" + name + ";DB_CLOSE_DELAY=-1");
    try (Connection connection = h2.getConnection();
        Statement statement = connection.createStatement()) {
      statement.execute("CREATE TABLE orders (id BIGINT PRIMARY KEY, state VARCHAR(32))");
      statement.execute("INSERT INTO orders VALUES (17, 'new')");
    }
    return h2;
  }

  private static String state(DataSource dataSource) throws SQLException {
    try (Connection connection = dataSource.getConnection();
        Statement statement = connection.createStatement();
        ResultSet row = statement.executeQuery("SELECT state FROM orders WHERE id = 17")) {
      assertThat(row.next()).isTrue();
      return row.getString(1);
    }
  }
}
