package io.lockstep.recipes.fence.http;

import io.lockstep.recipes.locks.LockHold;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.regex.Pattern;
import org.springframework.http.HttpHeaders;

/**
 * The HTTP convention of Lockstep's fencing: a lock holder's request to a service that owns the
 * guarded resource carries the holder's fencing token and the resource's name, and the service
 * admits the token before it writes ({@link FencingFilter}), refusing a stale one.
 *
 * <p><b>The headers.</b> Both, or neither; each at most once:
 *
 * <ul>
 *   <li>{@value #TOKEN}: the holder's fencing token ({@link LockHold#fencingToken()}), in decimal
 *       digits only (no sign, no leading or trailing text), from 1 to 9223372036854775807.
 *   <li>{@value #RESOURCE}: the name under which the service's fence keeps tokens, by default the
 *       lock's path ({@link LockHold#path()}), one name per lock. It is sent as the
 *       percent-encoding (RFC 3986) of its UTF-8 bytes: letters, digits and {@code - . _ ~ /} go as
 *       they are, every other byte as {@code %XX}, so a plain path such as {@code /locks/orders/17}
 *       is sent unchanged. A receiver decodes every {@code %XX} and takes every other printable
 *       ASCII character but the comma as itself; {@code %} not followed by two hex digits, a comma
 *       (which is how a proxy joins a header sent twice into one line: a comma of the name goes as
 *       {@code %2C}), a character outside printable ASCII, or bytes that are not UTF-8 make the
 *       headers malformed.
 * </ul>
 *
 * <p><b>The answers.</b> A service that follows the convention answers, with a {@code
 * application/problem+json} body (RFC 9457) whose {@code type} names the case:
 *
 * <ul>
 *   <li>{@code 409 Conflict}, type {@value #STALE_TOKEN_TYPE}: the token is older than one admitted
 *       for the resource before; the members {@code resource}, {@code token} and {@code
 *       highestAdmitted} say which. Nothing of the request was done.
 *   <li>{@code 400 Bad Request}, type {@value #MALFORMED_TYPE}: the headers break the rules above.
 *   <li>{@code 428 Precondition Required}, type {@value #REQUIRED_TYPE}: the request must carry the
 *       headers and did not.
 * </ul>
 *
 * <p>docs/fencing.md describes the convention for services in any language.
 *
 * <p><b>Per request.</b> A client with {@link FencingClientInterceptor} or {@link
 * FencingExchangeFilter} sends the token of the hold given to the request as an attribute ({@link
 * #heldBy(LockHold)}), else of the {@code @Locked} call running on the calling thread ({@link
 * io.lockstep.recipes.spring.LockedCall}), else nothing:
 *
 * <pre>{@code
 * import io.lockstep.recipes.fence.http.FencingClientInterceptor;
 * import io.lockstep.recipes.fence.http.FencingHeaders;
 * import io.lockstep.recipes.locks.LockHold;
 * import org.springframework.web.client.RestClient;
 *
 * LockHold hold = ...; // the caller's hold of /locks/orders/17
 * RestClient orders =
 *     RestClient.builder()
 *         .baseUrl("http://orders.internal")
 *         .requestInterceptor(new FencingClientInterceptor())
 *         .build();
 * orders
 *     .post()
 *     .uri("/orders/17/paid")
 *     .attributes(FencingHeaders.heldBy(hold)) // this request carries the hold's token
 *     .retrieve()
 *     .toBodilessEntity();
 * }</pre>
 */
public final class FencingHeaders {
  /** The header of the holder's fencing token: {@value}. */
  public static final String TOKEN = "Lockstep-Fencing-Token";

  /** The header of the guarded resource's name, percent-encoded: {@value}. */
  public static final String RESOURCE = "Lockstep-Fence-Resource";

  /**
   * The request attribute of the {@link LockHold} whose token a request carries: {@value}. Set it
   * with {@link #heldBy(LockHold)}.
   */
  public static final String HOLD_ATTRIBUTE = "io.lockstep.recipes.fence.http.hold";

  /**
   * The request attribute of the resource's name, when it is not the hold's lock path: {@value}.
   * Set it with {@link #heldBy(LockHold, String)}.
   */
  public static final String RESOURCE_ATTRIBUTE = "io.lockstep.recipes.fence.http.resource";

  /** The problem type of a stale token (409): {@value}. */
  public static final String STALE_TOKEN_TYPE = "urn:lockstep:fencing:stale-token";

  /** The problem type of malformed headers (400): {@value}. */
  public static final String MALFORMED_TYPE = "urn:lockstep:fencing:malformed-headers";

  /** The problem type of a request that must carry the headers and does not (428): {@value}. */
  public static final String REQUIRED_TYPE = "urn:lockstep:fencing:headers-required";

  /** A token: decimal digits, at most 19. */
  private static final Pattern DIGITS = Pattern.compile("[0-9]{1,19}");

  private static final char[] HEX = "0123456789ABCDEF".toCharArray();

  private FencingHeaders() {}

  /**
   * The attributes that make a request carry {@code hold}'s token, for the lock's path: pass it to
   * {@code RestClient}'s or {@code WebClient}'s {@code .attributes(...)}. The token is read when
   * the request is sent ({@link LockHold#fencingToken()}), so a hold known to be lost by then stops
   * the request with {@link io.lockstep.recipes.locks.LockOwnershipLostException}.
   *
   * @param hold the caller's hold
   * @return a consumer that puts {@link #HOLD_ATTRIBUTE} into a request's attributes
   * @throws NullPointerException if {@code hold} is null
   */
  public static Consumer<Map<String, Object>> heldBy(LockHold hold) {
    Objects.requireNonNull(hold, "hold");
    return attributes -> {
      attributes.put(HOLD_ATTRIBUTE, hold);
      attributes.remove(RESOURCE_ATTRIBUTE);
    };
  }

  /**
   * As {@link #heldBy(LockHold)}, for a resource named otherwise than the lock's path (one name per
   * lock, the name the service's fence keeps).
   *
   * @param hold the caller's hold
   * @param resource the resource's name, not blank
   * @return a consumer that puts {@link #HOLD_ATTRIBUTE} and {@link #RESOURCE_ATTRIBUTE} into a
   *     request's attributes
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code resource} is blank
   */
  public static Consumer<Map<String, Object>> heldBy(LockHold hold, String resource) {
    Objects.requireNonNull(hold, "hold");
    checkResource(resource);
    return attributes -> {
      attributes.put(HOLD_ATTRIBUTE, hold);
      attributes.put(RESOURCE_ATTRIBUTE, resource);
    };
  }

  /**
   * Sets both headers, replacing any earlier values: for a client this package has no interceptor
   * for, or a request built by hand.
   *
   * @param headers the request's headers
   * @param resource the resource's name, not blank; percent-encoded here
   * @param token the fencing token, at least 1
   * @throws NullPointerException if {@code headers} or {@code resource} is null
   * @throws IllegalArgumentException if {@code resource} is blank or {@code token} is below 1
   */
  public static void set(HttpHeaders headers, String resource, long token) {
    Objects.requireNonNull(headers, "headers");
    checkResource(resource);
    if (token < 1) {
      throw new IllegalArgumentException("token must be at least 1: " + token);
    }
    headers.set(TOKEN, Long.toString(token));
    headers.set(RESOURCE, encode(resource));
  }

  // ---- the rules, shared by the client and the filter ----

  /** The percent-encoding of a resource's name: see the class comment. */
  static String encode(String resource) {
    byte[] bytes = resource.getBytes(StandardCharsets.UTF_8);
    StringBuilder encoded = new StringBuilder(bytes.length);
    for (byte b : bytes) {
      int c = b & 0xFF;
      if ((c >= 'a' && c <= 'z')
          || (c >= 'A' && c <= 'Z')
          || (c >= '0' && c <= '9')
          || c == '-'
          || c == '.'
          || c == '_'
          || c == '~'
          || c == '/') {
        encoded.append((char) c);
      } else {
        encoded.append('%').append(HEX[c >> 4]).append(HEX[c & 0xF]);
      }
    }
    return encoded.toString();
  }

  /**
   * Decodes a {@link #RESOURCE} header.
   *
   * @throws IllegalArgumentException saying what is wrong, if the value breaks the rules or decodes
   *     to a blank name
   */
  static String decode(String value) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(value.length());
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (c == '%') {
        int high = i + 2 < value.length() ? Character.digit(value.charAt(i + 1), 16) : -1;
        int low = high >= 0 ? Character.digit(value.charAt(i + 2), 16) : -1;
        if (low < 0) {
          throw new IllegalArgumentException(
              RESOURCE + " has a '%' not followed by two hex digits: '" + value + "'");
        }
        bytes.write(high << 4 | low);
        i += 2;
      } else if (c == ',') {
        // A proxy joins a header sent twice into one line with ", ": not a name of its own.
        throw new IllegalArgumentException(
            RESOURCE
                + " has a ',' (a header sent twice and joined by a proxy?): percent-encode a"
                + " comma of the name as %2C: '"
                + value
                + "'");
      } else if (c >= 0x20 && c <= 0x7E) {
        bytes.write(c);
      } else {
        throw new IllegalArgumentException(
            RESOURCE + " has a character outside printable ASCII: percent-encode it");
      }
    }
    String resource;
    try {
      resource =
          StandardCharsets.UTF_8
              .newDecoder()
              .onMalformedInput(CodingErrorAction.REPORT)
              .onUnmappableCharacter(CodingErrorAction.REPORT)
              .decode(ByteBuffer.wrap(bytes.toByteArray()))
              .toString();
    } catch (CharacterCodingException e) {
      throw new IllegalArgumentException(
          RESOURCE + " does not decode to UTF-8: '" + value + "'", e);
    }
    if (resource.isBlank()) {
      throw new IllegalArgumentException(RESOURCE + " names no resource: '" + value + "'");
    }
    return resource;
  }

  /**
   * Parses a {@link #TOKEN} header.
   *
   * @throws IllegalArgumentException saying what is wrong, if it is not a token
   */
  static long parseToken(String value) {
    if (DIGITS.matcher(value).matches()) {
      try {
        long token = Long.parseLong(value);
        if (token >= 1) {
          return token;
        }
      } catch (NumberFormatException tooLarge) {
        // reported below
      }
    }
    throw new IllegalArgumentException(
        TOKEN + " must be a decimal integer from 1 to 9223372036854775807: '" + value + "'");
  }

  private static void checkResource(String resource) {
    Objects.requireNonNull(resource, "resource");
    if (resource.isBlank()) {
      throw new IllegalArgumentException("resource must not be blank: '" + resource + "'");
    }
  }
}
