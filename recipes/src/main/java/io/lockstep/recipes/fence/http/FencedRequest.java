package io.lockstep.recipes.fence.http;

import jakarta.servlet.http.HttpServletRequest;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import java.util.Optional;

/**
 * The fencing headers of a request to {@link FencingFilter}, read by {@link FencingHeaders}' rules.
 *
 * @param resource the resource's name, decoded
 * @param token the fencing token
 */
record FencedRequest(String resource, long token) {
  /**
   * The headers of {@code request}: empty if it carries neither.
   *
   * @throws IllegalArgumentException saying what is wrong, if they break the rules
   */
  static Optional<FencedRequest> read(HttpServletRequest request) {
    List<String> tokens = values(request, FencingHeaders.TOKEN);
    List<String> resources = values(request, FencingHeaders.RESOURCE);
    if (tokens.isEmpty() && resources.isEmpty()) {
      return Optional.empty();
    }
    if (tokens.size() != 1 || resources.size() != 1) {
      throw new IllegalArgumentException(
          FencingHeaders.TOKEN
              + " and "
              + FencingHeaders.RESOURCE
              + " go together, once each: this request carries them "
              + tokens.size()
              + " and "
              + resources.size()
              + " times");
    }
    long token = FencingHeaders.parseToken(tokens.get(0).strip());
    return Optional.of(new FencedRequest(FencingHeaders.decode(resources.get(0).strip()), token));
  }

  private static List<String> values(HttpServletRequest request, String header) {
    Enumeration<String> values = request.getHeaders(header);
    return values == null ? List.of() : new ArrayList<>(Collections.list(values));
  }
}
