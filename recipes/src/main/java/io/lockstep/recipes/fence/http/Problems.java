package io.lockstep.recipes.fence.http;

import io.lockstep.recipes.fence.StaleFencingTokenException;
import io.lockstep.recipes.internal.engine.Json;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * The answers {@link FencingFilter} gives of its own: RFC 9457 problem details, written without a
 * JSON library (the members are few and fixed).
 */
final class Problems {
  private Problems() {}

  /** 409: a stale token; the handler did not run. */
  static void stale(HttpServletResponse response, StaleFencingTokenException stale)
      throws IOException {
    write(
        response,
        HttpServletResponse.SC_CONFLICT,
        FencingHeaders.STALE_TOKEN_TYPE,
        "Stale fencing token",
        stale.getMessage(),
        ",\"resource\":"
            + string(stale.resource())
            + ",\"token\":"
            + stale.token()
            + ",\"highestAdmitted\":"
            + stale.highestAdmitted());
  }

  /** 400: malformed headers. */
  static void malformed(HttpServletResponse response, String detail) throws IOException {
    write(
        response,
        HttpServletResponse.SC_BAD_REQUEST,
        FencingHeaders.MALFORMED_TYPE,
        "Malformed fencing headers",
        detail,
        "");
  }

  /** 428: the request must carry the headers. */
  static void required(HttpServletResponse response, String request) throws IOException {
    write(
        response,
        428,
        FencingHeaders.REQUIRED_TYPE,
        "Fencing token required",
        request
            + " must carry "
            + FencingHeaders.TOKEN
            + " and "
            + FencingHeaders.RESOURCE
            + ": it writes a fenced resource",
        "");
  }

  private static void write(
      HttpServletResponse response,
      int status,
      String type,
      String title,
      String detail,
      String members)
      throws IOException {
    String body =
        "{\"type\":"
            + string(type)
            + ",\"title\":"
            + string(title)
            + ",\"status\":"
            + status
            + ",\"detail\":"
            + string(detail)
            + members
            + "}";
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    response.resetBuffer();
    response.setStatus(status);
    response.setContentType("application/problem+json");
    response.setCharacterEncoding(StandardCharsets.UTF_8.name());
    response.setContentLength(bytes.length);
    response.getOutputStream().write(bytes);
  }

  /** A JSON string. */
  static String string(String text) {
    return Json.quote(new StringBuilder(text.length() + 2), text).toString();
  }
}
