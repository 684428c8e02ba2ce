package io.lockstep.recipes.fence.http;

import io.lockstep.recipes.fence.StaleFencingTokenException;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpRequest;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.client.ClientHttpRequestExecution;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.ClientHttpResponse;
import org.springframework.http.client.support.HttpRequestWrapper;

/**
 * Puts the fencing headers ({@link FencingHeaders}) on the requests of a {@code RestClient} or a
 * {@code RestTemplate}: the token of the hold the request was given ({@link
 * FencingHeaders#heldBy(io.lockstep.recipes.locks.LockHold)}), else of the {@code @Locked} call
 * running on the calling thread ({@link io.lockstep.recipes.spring.LockedCall#current()}), for the
 * lock's path; a request with neither goes out as it is, and so does one that carries either header
 * already.
 *
 * <pre>{@code
 * import io.lockstep.recipes.fence.http.FencingClientInterceptor;
 * import org.springframework.web.client.RestClient;
 *
 * RestClient orders =
 *     RestClient.builder()
 *         .baseUrl("http://orders.internal")
 *         .requestInterceptor(new FencingClientInterceptor())
 *         .build();
 * }</pre>
 *
 * <p>A {@code RestTemplate} takes it with {@code getInterceptors().add(...)}; it has no request
 * attributes, so there the token is the {@code @Locked} call's (or set the headers yourself with
 * {@link FencingHeaders#set}).
 *
 * <p><b>Failures.</b> The token is read as the request is sent, and again for each retry of an
 * interceptor before this one: a hold known to be lost stops it with {@link
 * io.lockstep.recipes.locks.LockOwnershipLostException} (nothing is sent), a closed one with {@link
 * IllegalStateException}. A {@code 409} answer whose problem is the convention's stale token
 * ({@link FencingHeaders#STALE_TOKEN_TYPE}) is thrown as {@link StaleFencingTokenException}, as
 * {@code JdbcFence} throws it; every other answer is returned as the service gave it. Thread-safe;
 * one instance serves any number of clients.
 *
 * @see FencingExchangeFilter the same for {@code WebClient}
 */
public final class FencingClientInterceptor implements ClientHttpRequestInterceptor {
  /** Creates the interceptor. */
  public FencingClientInterceptor() {}

  @Override
  public ClientHttpResponse intercept(
      HttpRequest request, byte[] body, ClientHttpRequestExecution execution) throws IOException {
    if (FencedCall.carriesHeaders(request.getHeaders())) {
      return execution.execute(request, body);
    }
    Optional<FencedCall> call =
        FencedCall.holder(request.getAttributes()).map(FencedCall.Holder::call);
    if (call.isEmpty()) {
      return execution.execute(request, body);
    }
    // the headers go on a copy: the request of an interceptor before this one that retries it comes
    // back without them, and its hold is looked at again (a lost hold stops the retry)
    HttpHeaders headers = HttpHeaders.copyOf(request.getHeaders());
    call.get().addTo(headers);
    HttpRequest fenced =
        new HttpRequestWrapper(request) {
          @Override
          public HttpHeaders getHeaders() {
            return headers;
          }
        };
    ClientHttpResponse response = execution.execute(fenced, body);
    if (!FencedCall.mayBeRefusal(
        response.getStatusCode().value(), response.getHeaders().getContentType())) {
      return response;
    }
    byte[] problem;
    try (InputStream in = response.getBody()) {
      problem = in.readAllBytes();
    }
    Optional<StaleFencingTokenException> stale =
        call.get().refusal(new String(problem, StandardCharsets.UTF_8));
    if (stale.isPresent()) {
      response.close();
      throw stale.get();
    }
    return new ReadResponse(response, problem);
  }

  /** A response whose body was read here, to be read again by the caller. */
  private static final class ReadResponse implements ClientHttpResponse {
    private final ClientHttpResponse response;
    private final byte[] body;

    ReadResponse(ClientHttpResponse response, byte[] body) {
      this.response = response;
      this.body = body;
    }

    @Override
    public HttpStatusCode getStatusCode() throws IOException {
      return response.getStatusCode();
    }

    @Override
    public String getStatusText() throws IOException {
      return response.getStatusText();
    }

    @Override
    public HttpHeaders getHeaders() {
      return response.getHeaders();
    }

    @Override
    public InputStream getBody() {
      return new ByteArrayInputStream(body);
    }

    @Override
    public void close() {
      response.close();
    }
  }
}
