package io.lockstep.recipes.fence.http;

import io.lockstep.recipes.fence.StaleFencingTokenException;
import java.util.Optional;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.ExchangeFunction;
import reactor.core.publisher.Mono;

/**
 * Puts the fencing headers ({@link FencingHeaders}) on the requests of a {@code WebClient}: the
 * token of the hold the request was given ({@link
 * FencingHeaders#heldBy(io.lockstep.recipes.locks.LockHold)} in {@code .attributes(...)}), else of
 * the {@code @Locked} call running on the thread that subscribes, for the lock's path; a request
 * with neither goes out as it is, and so does one that carries either header already.
 *
 * <pre>{@code
 * import io.lockstep.recipes.fence.http.FencingExchangeFilter;
 * import org.springframework.web.reactive.function.client.WebClient;
 *
 * WebClient orders =
 *     WebClient.builder()
 *         .baseUrl("http://orders.internal")
 *         .filter(new FencingExchangeFilter())
 *         .build();
 * }</pre>
 *
 * <p><b>Which hold.</b> Give the hold explicitly: a {@code @Locked} call's hold is found only when
 * the request is subscribed to on the thread of that call ({@code .block()} inside the method), and
 * {@code @Locked} methods may not return a reactive type, since the hold ends when they return.
 *
 * <p><b>Failures.</b> The token is read when the request is subscribed to, and again at each
 * resubscription (a retry of a filter before this one): a hold known to be lost fails it with
 * {@link io.lockstep.recipes.locks.LockOwnershipLostException} (nothing is sent), a closed one with
 * {@link IllegalStateException}. A {@code 409} answer whose problem is the convention's stale token
 * fails with {@link StaleFencingTokenException}; every other answer is passed on as the service
 * gave it. Thread-safe.
 *
 * @see FencingClientInterceptor the same for {@code RestClient} and {@code RestTemplate}
 */
public final class FencingExchangeFilter implements ExchangeFilterFunction {
  /** Creates the filter. */
  public FencingExchangeFilter() {}

  @Override
  public Mono<ClientResponse> filter(ClientRequest request, ExchangeFunction next) {
    if (FencedCall.carriesHeaders(request.headers())) {
      return next.exchange(request);
    }
    // the hold is found now, on the subscribing thread (a @Locked call's); its token is read at
    // each subscription, so that a retry of a filter before this one stops once the hold is lost
    Optional<FencedCall.Holder> holder = FencedCall.holder(request.attributes());
    if (holder.isEmpty()) {
      return next.exchange(request);
    }
    return Mono.defer(() -> fenced(holder.get().call(), request, next));
  }

  private static Mono<ClientResponse> fenced(
      FencedCall call, ClientRequest request, ExchangeFunction next) {
    ClientRequest fenced = ClientRequest.from(request).headers(call::addTo).build();
    return next.exchange(fenced)
        .flatMap(
            response ->
                FencedCall.mayBeRefusal(
                        response.statusCode().value(),
                        response.headers().contentType().orElse(null))
                    ? refusedOrAsGiven(call, response)
                    : Mono.just(response));
  }

  private static Mono<ClientResponse> refusedOrAsGiven(FencedCall call, ClientResponse response) {
    return response
        .bodyToMono(String.class)
        .defaultIfEmpty("")
        .flatMap(
            problem -> {
              Optional<StaleFencingTokenException> stale = call.refusal(problem);
              return stale.isPresent()
                  ? Mono.<ClientResponse>error(stale.get())
                  : Mono.just(response.mutate().body(problem).build());
            });
  }
}
