package io.lockstep.recipes.fence.http;

import io.lockstep.recipes.fence.StaleFencingTokenException;
import io.lockstep.recipes.locks.LockHold;
import io.lockstep.recipes.spring.LockedCall;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;

/**
 * What a client request is sent under: the resource and the token its headers carry. Shared by
 * {@link FencingClientInterceptor} and {@link FencingExchangeFilter}.
 *
 * @param resource the resource's name, not encoded
 * @param token the fencing token
 */
record FencedCall(String resource, long token) {
  private static final Pattern STALE_TYPE =
      Pattern.compile(
          "\"type\"\\s*:\\s*\"" + Pattern.quote(FencingHeaders.STALE_TOKEN_TYPE) + "\"");
  private static final Pattern HIGHEST =
      Pattern.compile("\"highestAdmitted\"\\s*:\\s*\"?(\\d{1,19})");

  /**
   * The hold a request with these attributes is sent under, and for which resource: the hold of
   * {@link FencingHeaders#HOLD_ATTRIBUTE}, else that of the {@code @Locked} call running on this
   * thread; empty if neither. Its token is not read yet: {@link Holder#call()} reads it.
   */
  static Optional<Holder> holder(Map<String, Object> attributes) {
    Object given = attributes.get(FencingHeaders.HOLD_ATTRIBUTE);
    if (given instanceof LockHold hold) {
      Object resource = attributes.get(FencingHeaders.RESOURCE_ATTRIBUTE);
      return Optional.of(new Holder(hold, resource instanceof String name ? name : hold.path()));
    }
    return LockedCall.find().map(hold -> new Holder(hold, hold.path()));
  }

  /**
   * A request's hold and resource, found once per request; each attempt to send it reads the token
   * again.
   *
   * @param hold the hold whose token the request carries
   * @param resource the resource's name, not encoded
   */
  record Holder(LockHold hold, String resource) {
    /**
     * The call an attempt is sent under: the token is read now.
     *
     * @throws io.lockstep.recipes.locks.LockOwnershipLostException if the hold is known to be lost
     * @throws IllegalStateException if the hold was closed
     */
    FencedCall call() {
      return new FencedCall(resource, hold.fencingToken());
    }
  }

  /** Whether a request already carries either header: then it is sent as it is. */
  static boolean carriesHeaders(HttpHeaders headers) {
    return headers.containsHeader(FencingHeaders.TOKEN)
        || headers.containsHeader(FencingHeaders.RESOURCE);
  }

  void addTo(HttpHeaders headers) {
    FencingHeaders.set(headers, resource, token);
  }

  /** Whether a response may be the service's refusal of this call's token. */
  static boolean mayBeRefusal(int status, MediaType contentType) {
    return status == 409
        && contentType != null
        && contentType.isCompatibleWith(MediaType.APPLICATION_PROBLEM_JSON);
  }

  /**
   * The refusal a 409 problem body says, if it is the convention's stale-token problem with its
   * {@code highestAdmitted}: thrown to the caller as it would be by {@code JdbcFence}.
   */
  Optional<StaleFencingTokenException> refusal(String problem) {
    Matcher highest = HIGHEST.matcher(problem);
    if (!STALE_TYPE.matcher(problem).find() || !highest.find()) {
      return Optional.empty();
    }
    try {
      return Optional.of(
          new StaleFencingTokenException(resource, token, Long.parseLong(highest.group(1))));
    } catch (NumberFormatException tooLarge) {
      return Optional.empty();
    }
  }
}
