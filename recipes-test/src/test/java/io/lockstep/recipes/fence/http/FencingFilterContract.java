package io.lockstep.recipes.fence.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.recipes.fence.StaleFencingTokenException;
import io.lockstep.recipes.locks.LockHold;
import io.lockstep.recipes.locks.LockState;
import io.lockstep.recipes.locks.ReentrantMutex;
import io.lockstep.testkit.Fault;
import io.lockstep.testkit.LockstepZooKeeper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.web.client.RestClient;

/**
 * What {@link FencingFilter} promises, over real HTTP (an embedded Tomcat, {@link OrdersService}),
 * on a real database (each subclass names one) and, where a lock holds, a real ZooKeeper: the
 * admission commits with the handler's writes, a stale holder is answered 409 and writes nothing,
 * and a handler that fails takes the admission back with it.
 */
@Timeout(60)
abstract class FencingFilterContract {
  @RegisterExtension static final LockstepZooKeeper zk = LockstepZooKeeper.server();

  static final String RESOURCE = "/locks/orders/17";

  @TempDir Path tomcatDir;
  OrdersService service;
  RestClient orders;
  final HttpClient http = HttpClient.newHttpClient();

  /** A fresh, empty database for this test. */
  abstract DataSource database();

  @BeforeEach
  void startService() throws Exception {
    DataSource dataSource = database();
    service = OrdersService.start(dataSource, tomcatDir, FencingFilter.builder(dataSource));
    orders =
        RestClient.builder()
            .baseUrl(service.uri("").toString())
            .requestInterceptor(new FencingClientInterceptor())
            .build();
  }

  @AfterEach
  void stopService() throws Exception {
    service.close();
  }

  // ---- admitted ----

  @Test
  void aFreshHoldersCall_isAdmitted_andItsWriteCommitsWithTheAdmission() throws Exception {
    ReentrantMutex lock = new ReentrantMutex(zk.newClient(), zk.path("orders-17"));
    try (LockHold hold = lock.hold()) {
      String answer =
          orders
              .post()
              .uri("/orders/order-17?state=paid")
              .attributes(FencingHeaders.heldBy(hold))
              .retrieve()
              .body(String.class);

      assertThat(answer).isEqualTo("ok paid in the fence's transaction");
      assertThat(service.order()).isEqualTo("paid@" + hold.fencingToken());
      assertThat(service.fence.highestAdmitted(hold.path())).hasValue(hold.fencingToken());
    }
  }

  // ---- refused: the paused holder ----

  @Test
  void aHolderWhoseSessionExpired_callsAfterTheNextHolderWrote_andIsAnswered409_withNothingWritten()
      throws Exception {
    String path = zk.path("orders-17");
    CuratorFramework clientA = zk.newClient();
    LockHold holdA = new ReentrantMutex(clientA, path).hold();
    long tokenA = holdA.fencingToken();
    ReentrantMutex lockB = new ReentrantMutex(zk.newClient(), path);
    // A pauses: it hears nothing from ZooKeeper, which meanwhile ends its session
    Fault paused = zk.faults().silence(clientA, Duration.ofSeconds(50));
    zk.faults().expireSessionOf(holdA);
    try (LockHold holdB = lockB.tryHold(Duration.ofSeconds(20)).orElseThrow()) {
      long tokenB = holdB.fencingToken();
      assertThat(tokenB).isGreaterThan(tokenA);
      assertThat(
              orders
                  .post()
                  .uri("/orders/order-17?state=paid-by-B")
                  .attributes(FencingHeaders.heldBy(holdB))
                  .retrieve()
                  .body(String.class))
          .isEqualTo("ok paid-by-B in the fence's transaction");

      // A resumes, its hold unaware of the loss, and calls with its token
      assertThat(holdA.state()).isNotEqualTo(LockState.LOST);
      assertThatThrownBy(
              () ->
                  orders
                      .post()
                      .uri("/orders/order-17?state=paid-by-A")
                      .attributes(FencingHeaders.heldBy(holdA))
                      .retrieve()
                      .body(String.class))
          .isInstanceOfSatisfying(
              StaleFencingTokenException.class,
              stale -> {
                assertThat(stale.resource()).isEqualTo(path);
                assertThat(stale.token()).isEqualTo(tokenA);
                assertThat(stale.highestAdmitted()).isEqualTo(tokenB);
              });
      // on the wire: 409 and the problem, as any client sees it
      HttpResponse<String> raw = post("/orders/order-17?state=paid-by-A", path, tokenA);
      assertThat(raw.statusCode()).isEqualTo(409);
      assertThat(raw.headers().firstValue("Content-Type"))
          .hasValueSatisfying(type -> assertThat(type).startsWith("application/problem+json"));
      assertThat(raw.body())
          .startsWith("{\"type\":\"urn:lockstep:fencing:stale-token\",")
          .contains("\"title\":\"Stale fencing token\"", "\"status\":409")
          .contains("\"resource\":\"" + path + "\"")
          .contains("\"token\":" + tokenA + ",", "\"highestAdmitted\":" + tokenB + "}");

      assertThat(service.handled).as("requests that reached the handler").hasValue(1);
      assertThat(service.order()).isEqualTo("paid-by-B@" + tokenB);
      assertThat(service.fence.highestAdmitted(path)).hasValue(tokenB);
    } finally {
      paused.heal();
      holdA.close();
    }
  }

  // ---- rolled back with the handler ----

  @Test
  void aHandlerThatThrows_rollsTheAdmissionBack_withItsWrite() throws Exception {
    assertThat(post("/orders/order-17?state=paid", RESOURCE, 20).statusCode()).isEqualTo(200);

    HttpResponse<String> failed = post("/orders/order-17?state=shipped&fail=throw", RESOURCE, 30);

    assertThat(failed.statusCode()).isEqualTo(500);
    assertThat(service.handled).hasValue(2);
    assertThat(service.order()).isEqualTo("paid@20");
    assertThat(service.fence.highestAdmitted(RESOURCE)).hasValue(20);
    // 30 was never admitted: 25 still is
    assertThat(post("/orders/order-17?state=shipped", RESOURCE, 25).statusCode()).isEqualTo(200);
    assertThat(service.order()).isEqualTo("shipped@25");
  }

  // ---- helpers ----

  /** A POST with both headers set by hand, as a client in any language sends them. */
  HttpResponse<String> post(String pathAndQuery, String resource, long token)
      throws IOException, InterruptedException {
    return post(
        pathAndQuery,
        Map.of(
            FencingHeaders.TOKEN,
            List.of(Long.toString(token)),
            FencingHeaders.RESOURCE,
            List.of(FencingHeaders.encode(resource))));
  }

  HttpResponse<String> post(String pathAndQuery, Map<String, List<String>> headers)
      throws IOException, InterruptedException {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create(service.uri(pathAndQuery).toString()))
            .timeout(Duration.ofSeconds(20))
            .POST(HttpRequest.BodyPublishers.noBody());
    headers.forEach((name, values) -> values.forEach(value -> request.header(name, value)));
    return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }
}
