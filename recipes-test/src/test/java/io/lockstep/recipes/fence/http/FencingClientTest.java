package io.lockstep.recipes.fence.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import io.lockstep.recipes.fence.StaleFencingTokenException;
import io.lockstep.recipes.locks.LockHold;
import io.lockstep.recipes.locks.LockOwnershipLostException;
import io.lockstep.recipes.locks.ReentrantMutex;
import io.lockstep.recipes.spring.EnableLockstepLocking;
import io.lockstep.recipes.spring.Locked;
import io.lockstep.recipes.spring.LockstepLockRegistry;
import io.lockstep.testkit.LockstepZooKeeper;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.ClientHttpResponse;
import org.springframework.http.client.reactive.JdkClientHttpConnector;
import org.springframework.web.client.HttpClientErrorException;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestTemplate;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.client.WebClientResponseException;
import reactor.core.publisher.Mono;
import reactor.util.retry.Retry;

/**
 * The client's side of HTTP fencing against a real HTTP server (the JDK's), with holds of a real
 * ZooKeeper: which hold's token each request carries, for which resource, and what a refusal
 * becomes.
 */
@Timeout(60)
class FencingClientTest {
  @RegisterExtension static final LockstepZooKeeper zk = LockstepZooKeeper.server();

  /** What the server received: the two headers of each request, null where absent. */
  record Received(String token, String resource) {}

  private final List<Received> received = new CopyOnWriteArrayList<>();
  private volatile int status = 200;
  private volatile String contentType = "text/plain";
  private volatile String body = "ok";
  private HttpServer server;
  private URI uri;

  @BeforeEach
  void startServer() throws IOException {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.createContext(
        "/",
        exchange -> {
          received.add(
              new Received(
                  exchange.getRequestHeaders().getFirst(FencingHeaders.TOKEN),
                  exchange.getRequestHeaders().getFirst(FencingHeaders.RESOURCE)));
          exchange.getRequestBody().readAllBytes();
          byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
          exchange.getResponseHeaders().set("Content-Type", contentType);
          exchange.sendResponseHeaders(status, bytes.length);
          try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
          }
        });
    server.start();
    uri = URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/orders/17");
  }

  @AfterEach
  void stopServer() {
    server.stop(0);
  }

  private static RestClient restClient() {
    return RestClient.builder().requestInterceptor(new FencingClientInterceptor()).build();
  }

  private static WebClient webClient() {
    return WebClient.builder()
        .clientConnector(new JdkClientHttpConnector())
        .filter(new FencingExchangeFilter())
        .build();
  }

  private LockHold hold(String name) throws Exception {
    return new ReentrantMutex(zk.newClient(), zk.path(name)).hold();
  }

  // ---- a hold given per request ----

  @Test
  void aHoldGivenPerRequest_sendsItsTokenForItsLocksPath_fromRestClientAndWebClient()
      throws Exception {
    try (LockHold hold = hold("orders-17")) {
      restClient()
          .post()
          .uri(uri)
          .attributes(FencingHeaders.heldBy(hold))
          .retrieve()
          .body(String.class);
      webClient()
          .post()
          .uri(uri)
          .attributes(FencingHeaders.heldBy(hold, "orders 17"))
          .retrieve()
          .bodyToMono(String.class)
          .block(Duration.ofSeconds(10));

      assertThat(received)
          .containsExactly(
              new Received(Long.toString(hold.fencingToken()), hold.path()),
              new Received(Long.toString(hold.fencingToken()), "orders%2017"));
    }
  }

  @Test
  void withoutAHold_noHeadersAreSent_andHeadersSetByHand_areLeftAlone() throws Exception {
    try (LockHold hold = hold("orders-17")) {
      restClient().post().uri(uri).retrieve().body(String.class);
      webClient().post().uri(uri).retrieve().bodyToMono(String.class).block(Duration.ofSeconds(10));
      restClient()
          .post()
          .uri(uri)
          .headers(headers -> FencingHeaders.set(headers, "/by/hand", 5))
          .attributes(FencingHeaders.heldBy(hold))
          .retrieve()
          .body(String.class);
      webClient()
          .post()
          .uri(uri)
          .headers(headers -> FencingHeaders.set(headers, "/by/hand", 6))
          .attributes(FencingHeaders.heldBy(hold))
          .retrieve()
          .bodyToMono(String.class)
          .block(Duration.ofSeconds(10));
    }

    assertThat(received)
        .containsExactly(
            new Received(null, null),
            new Received(null, null),
            new Received("5", "/by/hand"),
            new Received("6", "/by/hand"));
  }

  // ---- the @Locked call's hold ----

  /** A service whose @Locked methods call the orders service. */
  static class Shipping {
    private final RestTemplate rest;
    private final WebClient web;

    Shipping(RestTemplate rest, WebClient web) {
      this.rest = rest;
      this.web = web;
    }

    @Locked(key = "'orders/' + #orderId")
    public String ship(String orderId, URI orders) {
      return rest.postForObject(orders, null, String.class);
    }

    @Locked(key = "'orders/' + #orderId")
    public String shipReactively(String orderId, URI orders) {
      return web.post().uri(orders).retrieve().bodyToMono(String.class).block();
    }
  }

  @Configuration(proxyBeanMethods = false)
  @EnableLockstepLocking
  static class Config {
    @Bean
    LockstepLockRegistry registry(CuratorFramework client) {
      return new LockstepLockRegistry(client, zk.path("locks"));
    }

    @Bean
    Shipping shipping() {
      RestTemplate rest = new RestTemplate();
      rest.getInterceptors().add(new FencingClientInterceptor());
      return new Shipping(rest, webClient());
    }
  }

  @Test
  void insideALockedCall_itsHoldIsSent_fromRestTemplateAndFromABlockingWebClient()
      throws Exception {
    CuratorFramework client = zk.newClient();
    try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext()) {
      context.registerBean(CuratorFramework.class, () -> client);
      context.register(Config.class);
      context.refresh();
      Shipping shipping = context.getBean(Shipping.class);
      String path = context.getBean(LockstepLockRegistry.class).pathOf("orders/17");

      assertThat(shipping.ship("17", uri)).isEqualTo("ok");
      assertThat(shipping.shipReactively("17", uri)).isEqualTo("ok");

      assertThat(received).hasSize(2).allSatisfy(r -> assertThat(r.resource()).isEqualTo(path));
      assertThat(Long.parseLong(received.get(1).token()))
          .as("the second call's hold is a new one")
          .isGreaterThan(Long.parseLong(received.get(0).token()));
    }
  }

  // ---- failures ----

  @Test
  void aHoldKnownToBeLost_stopsTheRequest_beforeItIsSent() throws Exception {
    try (LockHold hold = hold("orders-17")) {
      zk.faults().expireSessionOf(hold);
      hold.whenLost().toCompletableFuture().get(20, java.util.concurrent.TimeUnit.SECONDS);

      assertThatThrownBy(
              () ->
                  restClient()
                      .post()
                      .uri(uri)
                      .attributes(FencingHeaders.heldBy(hold))
                      .retrieve()
                      .body(String.class))
          .isInstanceOf(LockOwnershipLostException.class);
      assertThatThrownBy(
              () ->
                  webClient()
                      .post()
                      .uri(uri)
                      .attributes(FencingHeaders.heldBy(hold))
                      .retrieve()
                      .bodyToMono(String.class)
                      .block(Duration.ofSeconds(10)))
          .isInstanceOf(LockOwnershipLostException.class);
    }
    assertThat(received).isEmpty();
  }

  /** The server answers 503 once; the hold is lost before the client's retry. */
  private void loseBeforeTheRetry(LockHold hold) {
    status = 200;
    zk.faults().expireSessionOf(hold);
    try {
      hold.whenLost().toCompletableFuture().get(20, java.util.concurrent.TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  @Test
  void aRetryByAnOuterInterceptor_afterTheHoldWasLost_isNotSent_fromRestClient() throws Exception {
    status = 503;
    try (LockHold hold = hold("orders-17")) {
      ClientHttpRequestInterceptor retryOnce =
          (request, requestBody, execution) -> {
            ClientHttpResponse first = execution.execute(request, requestBody);
            if (first.getStatusCode().value() != 503) {
              return first;
            }
            first.close();
            loseBeforeTheRetry(hold);
            return execution.execute(request, requestBody);
          };
      RestClient retrying =
          RestClient.builder()
              .requestInterceptor(retryOnce)
              .requestInterceptor(new FencingClientInterceptor())
              .build();

      assertThatThrownBy(
              () ->
                  retrying
                      .post()
                      .uri(uri)
                      .attributes(FencingHeaders.heldBy(hold))
                      .retrieve()
                      .body(String.class))
          .isInstanceOf(LockOwnershipLostException.class);
      assertThat(received).as("requests sent").hasSize(1);
    }
  }

  @Test
  void aRetryByAnOuterFilter_afterTheHoldWasLost_isNotSent_fromWebClient() throws Exception {
    status = 503;
    try (LockHold hold = hold("orders-17")) {
      WebClient retrying =
          WebClient.builder()
              .clientConnector(new JdkClientHttpConnector())
              .filter(
                  (request, next) ->
                      next.exchange(request)
                          .flatMap(
                              response ->
                                  response.statusCode().value() == 503
                                      ? response
                                          .releaseBody()
                                          .then(Mono.error(new IllegalStateException("503")))
                                      : Mono.just(response))
                          .retryWhen(
                              Retry.max(1)
                                  .filter(e -> "503".equals(e.getMessage()))
                                  .doBeforeRetry(signal -> loseBeforeTheRetry(hold))))
              .filter(new FencingExchangeFilter())
              .build();

      assertThatThrownBy(
              () ->
                  retrying
                      .post()
                      .uri(uri)
                      .attributes(FencingHeaders.heldBy(hold))
                      .retrieve()
                      .bodyToMono(String.class)
                      .block(Duration.ofSeconds(30)))
          .isInstanceOf(LockOwnershipLostException.class);
      assertThat(received).as("requests sent").hasSize(1);
    }
  }

  @Test
  void aStaleTokenProblem_isThrownAsStaleFencingTokenException_andAnother409AsItCame()
      throws Exception {
    status = 409;
    contentType = "application/problem+json";
    try (LockHold hold = hold("orders-17")) {
      long token = hold.fencingToken();
      body =
          "{\"type\":\"urn:lockstep:fencing:stale-token\",\"title\":\"Stale fencing token\","
              + "\"status\":409,\"resource\":\""
              + hold.path()
              + "\",\"token\":"
              + token
              + ",\"highestAdmitted\":"
              + (token + 5)
              + "}";

      assertThatThrownBy(
              () ->
                  restClient()
                      .post()
                      .uri(uri)
                      .attributes(FencingHeaders.heldBy(hold))
                      .retrieve()
                      .body(String.class))
          .isInstanceOfSatisfying(
              StaleFencingTokenException.class,
              stale -> {
                assertThat(stale.resource()).isEqualTo(hold.path());
                assertThat(stale.token()).isEqualTo(token);
                assertThat(stale.highestAdmitted()).isEqualTo(token + 5);
              });
      assertThatThrownBy(
              () ->
                  webClient()
                      .post()
                      .uri(uri)
                      .attributes(FencingHeaders.heldBy(hold))
                      .retrieve()
                      .bodyToMono(String.class)
                      .block(Duration.ofSeconds(10)))
          .isInstanceOfSatisfying(
              StaleFencingTokenException.class,
              stale -> assertThat(stale.highestAdmitted()).isEqualTo(token + 5));

      // another conflict is the service's own: passed on with its body
      body = "{\"type\":\"urn:example:out-of-stock\",\"status\":409}";
      assertThatThrownBy(
              () ->
                  restClient()
                      .post()
                      .uri(uri)
                      .attributes(FencingHeaders.heldBy(hold))
                      .retrieve()
                      .body(String.class))
          .isInstanceOfSatisfying(
              HttpClientErrorException.Conflict.class,
              conflict -> assertThat(conflict.getResponseBodyAsString()).isEqualTo(body));
      assertThatThrownBy(
              () ->
                  webClient()
                      .post()
                      .uri(uri)
                      .attributes(FencingHeaders.heldBy(hold))
                      .retrieve()
                      .bodyToMono(String.class)
                      .block(Duration.ofSeconds(10)))
          .isInstanceOfSatisfying(
              WebClientResponseException.Conflict.class,
              conflict -> assertThat(conflict.getResponseBodyAsString()).isEqualTo(body));
    }
    assertThat(received).hasSize(4);
  }
}
