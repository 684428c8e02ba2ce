package io.lockstep.recipes.fence.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.locks.LockHold;
import io.lockstep.recipes.locks.ReentrantMutex;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;

/**
 * {@link FencingFilter} on H2 in memory, a database per test; and what does not depend on the
 * database: the headers' rules, and requests without them.
 */
class FencingFilterH2Test extends FencingFilterContract {
  private static final AtomicInteger databaseNumber = new AtomicInteger();

  /** Longer than the fence table's resource column (255 characters). */
  private static final String LONG_NAME = "/locks/" + "x".repeat(300);

  @Override
  DataSource database() {
    JdbcDataSource database = new JdbcDataSource();
    database.setURL(
        "jdbc:h2:mem:fencing-filter"
            + databaseNumber.incrementAndGet()
            + ";DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=10000");
    return database;
  }

  @Test
  void aHandlerThatAnswers500Or409Itself_rollsBack_andItsAnswerIsSent() throws Exception {
    HttpResponse<String> failed = post("/orders/order-17?state=paid&fail=500", RESOURCE, 20);
    HttpResponse<String> conflict = post("/orders/order-17?state=paid&fail=409", RESOURCE, 21);

    assertThat(failed.statusCode()).isEqualTo(500);
    assertThat(failed.body()).isEqualTo("ok paid in the fence's transaction");
    assertThat(conflict.statusCode()).isEqualTo(409);
    assertThat(service.handled).hasValue(2);
    assertThat(service.order()).isEqualTo("new@0");
    assertThat(service.fence.highestAdmitted(RESOURCE)).isEmpty();
  }

  @Test
  void malformedHeaders_areAnswered400_withAProblem_andReachNoHandler() throws Exception {
    Map<String, Map<String, List<String>>> cases = new LinkedHashMap<>();
    cases.put("not a number", headers(List.of("abc"), List.of(RESOURCE)));
    cases.put("zero", headers(List.of("0"), List.of(RESOURCE)));
    cases.put("a sign", headers(List.of("+17"), List.of(RESOURCE)));
    cases.put("too large", headers(List.of("9223372036854775808"), List.of(RESOURCE)));
    cases.put("no resource", headers(List.of("17"), List.of()));
    cases.put("no token", headers(List.of(), List.of(RESOURCE)));
    cases.put("two tokens", headers(List.of("17", "18"), List.of(RESOURCE)));
    cases.put("a bad escape", headers(List.of("17"), List.of("/locks/orders%2")));
    cases.put("not UTF-8", headers(List.of("17"), List.of("/locks/%C3%28")));
    cases.put("a blank resource", headers(List.of("17"), List.of("%20")));
    // A proxy may join a header sent twice into one line, with a comma: not a name of its own.
    cases.put("two resources joined", headers(List.of("17"), List.of(RESOURCE + ", " + RESOURCE)));
    cases.put("a name the fence's column cannot hold", headers(List.of("17"), List.of(LONG_NAME)));

    for (Map.Entry<String, Map<String, List<String>>> bad : cases.entrySet()) {
      HttpResponse<String> answer = post("/orders/order-17?state=paid", bad.getValue());

      assertThat(answer.statusCode()).as(bad.getKey()).isEqualTo(400);
      assertThat(answer.headers().firstValue("Content-Type"))
          .as(bad.getKey())
          .hasValueSatisfying(type -> assertThat(type).startsWith("application/problem+json"));
      assertThat(answer.body())
          .as(bad.getKey())
          .startsWith(
              "{\"type\":\"urn:lockstep:fencing:malformed-headers\",\"title\":\"Malformed fencing"
                  + " headers\",\"status\":400,\"detail\":\"Lockstep-Fen");
    }
    assertThat(service.handled).hasValue(0);
    assertThat(service.order()).isEqualTo("new@0");
    assertThat(service.fence.highestAdmitted(RESOURCE)).isEmpty();
    assertThat(service.fence.highestAdmitted(RESOURCE + ", " + RESOURCE)).isEmpty();
  }

  @Test
  void aResourceName_isPercentEncodedOnTheWay_andDecodedByTheFilter() throws Exception {
    String resource = "orders/17 (été)";
    ReentrantMutex lock = new ReentrantMutex(zk.newClient(), zk.path("orders-17"));
    try (LockHold hold = lock.hold()) {
      orders
          .post()
          .uri("/orders/order-17?state=paid")
          .attributes(FencingHeaders.heldBy(hold, resource))
          .retrieve()
          .toBodilessEntity();

      assertThat(service.fence.highestAdmitted(resource)).hasValue(hold.fencingToken());
    }
    assertThat(FencingHeaders.encode(resource)).isEqualTo("orders/17%20%28%C3%A9t%C3%A9%29");
    assertThat(FencingHeaders.decode("orders/17%20%28%c3%a9t%c3%a9%29")).isEqualTo(resource);
    assertThat(FencingHeaders.decode("/locks/a:b@c")).isEqualTo("/locks/a:b@c");
  }

  @Test
  void aRequestWithoutTheHeaders_passesThroughUntouched_outsideAnyTransaction() throws Exception {
    HttpResponse<String> answer = post("/orders/order-17?state=paid", Map.of());

    assertThat(answer.statusCode()).isEqualTo(200);
    assertThat(answer.body()).isEqualTo("ok paid outside a transaction");
    assertThat(service.order()).isEqualTo("paid@0");
    assertThat(service.fence.highestAdmitted(RESOURCE)).isEmpty();
  }

  @Test
  void aRequestThatMustBeFenced_withoutTheHeaders_isAnswered428_andReachesNoHandler()
      throws Exception {
    service.close();
    DataSource dataSource = database();
    service =
        OrdersService.start(
            dataSource,
            tomcatDir,
            FencingFilter.builder(dataSource)
                .requireFencing(request -> request.getRequestURI().startsWith("/orders/")));

    HttpResponse<String> refused = post("/orders/order-17?state=paid", Map.of());
    HttpResponse<String> fenced = post("/orders/order-17?state=paid", RESOURCE, 20);

    assertThat(refused.statusCode()).isEqualTo(428);
    assertThat(refused.body())
        .startsWith("{\"type\":\"urn:lockstep:fencing:headers-required\",")
        .contains(
            "\"detail\":\"POST /orders/order-17 must carry Lockstep-Fencing-Token and"
                + " Lockstep-Fence-Resource: it writes a fenced resource\"");
    assertThat(fenced.statusCode()).isEqualTo(200);
    assertThat(service.handled).hasValue(1);
    assertThat(service.order()).isEqualTo("paid@20");
  }

  /**
   * A handler that starts async processing would write on another thread, outside the fence's
   * transaction: it must be stopped before it can start, or A's write lands after B's.
   */
  @Test
  void aHandlerThatStartsAsyncProcessing_isFailed_andItsWriteNeverLands_afterANewerHolders()
      throws Exception {
    CompletableFuture<HttpResponse<String>> callA =
        http.sendAsync(
            HttpRequest.newBuilder(
                    URI.create(
                        service.uri("/orders/order-17?state=paid-by-A&async=true").toString()))
                .timeout(Duration.ofSeconds(40))
                .header(FencingHeaders.TOKEN, "20")
                .header(FencingHeaders.RESOURCE, FencingHeaders.encode(RESOURCE))
                .POST(HttpRequest.BodyPublishers.noBody())
                .build(),
            HttpResponse.BodyHandlers.ofString());
    await().atMost(Duration.ofSeconds(20)).until(() -> service.handled.get() == 1);

    // B, the newer holder, writes and commits while A's handler is under way
    assertThat(post("/orders/order-17?state=paid-by-B", RESOURCE, 30).statusCode()).isEqualTo(200);
    service.asyncWriteMayGo.countDown();

    String outcome = service.asyncWrite.get(30, TimeUnit.SECONDS);
    assertThat(service.order()).as("A's async handler wrote: " + outcome).isEqualTo("paid-by-B@30");
    assertThat(outcome).startsWith("refused: ");
    assertThat(callA.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(500);
    assertThat(service.fence.highestAdmitted(RESOURCE)).hasValue(30);
  }

  private static Map<String, List<String>> headers(List<String> tokens, List<String> resources) {
    Map<String, List<String>> headers = new LinkedHashMap<>();
    if (!tokens.isEmpty()) {
      headers.put(FencingHeaders.TOKEN, tokens);
    }
    if (!resources.isEmpty()) {
      headers.put(FencingHeaders.RESOURCE, resources);
    }
    return headers;
  }
}
