package io.lockstep.recipes.fence.http;

import io.lockstep.recipes.fence.JdbcFence;
import io.lockstep.recipes.fence.StaleFencingTokenException;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Predicate;
import javax.sql.DataSource;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionStatus;
import org.springframework.transaction.support.DefaultTransactionDefinition;
import org.springframework.web.filter.OncePerRequestFilter;
import org.springframework.web.util.ContentCachingResponseWrapper;

/**
 * The service's half of HTTP fencing: a servlet filter that admits the fencing token a request
 * carries ({@link FencingHeaders}) through a {@link JdbcFence}, in one transaction with everything
 * the request's handler writes to the same database, and refuses a stale token with {@code 409
 * Conflict} before the handler runs.
 *
 * <p><b>Admitted.</b> For a request that carries both headers, the filter begins a transaction with
 * its transaction manager (by default a {@link DataSourceTransactionManager} of the {@link
 * DataSource}), admits the token for the named resource on the transaction's connection ({@link
 * DataSourceUtils#getConnection(DataSource)}), and runs the rest of the chain inside it: a {@code
 * JdbcTemplate}, or any code that takes its connections through {@code DataSourceUtils} (a {@code
 * TransactionAwareDataSourceProxy}, jOOQ or MyBatis on Spring), on the same {@code DataSource} and
 * thread, writes on that connection, and a {@code @Transactional} method joins the transaction.
 * When the handler returns with a status below 400, the filter commits: the admission and the
 * handler's writes land together. When it throws, or answers 400 or above, the filter rolls
 * everything back and the token is not admitted. The resource's fence row stays locked until then,
 * so requests fenced on one resource run their handlers one after another, in the order of their
 * tokens.
 *
 * <p><b>Answers of its own</b> ({@code application/problem+json}, see {@link FencingHeaders}):
 * {@code 409} to a stale token, naming the resource, the token and the greatest admitted (the
 * handler does not run, nothing is written); {@code 400} to malformed headers, or to a resource
 * name longer than the fence's column (the handler does not run); {@code 428} to a request without
 * the headers that {@link Builder#requireFencing(Predicate)} says must carry them. A request
 * without the headers is otherwise passed on untouched, outside any transaction of the filter's.
 *
 * <pre>{@code
 * import io.lockstep.recipes.fence.http.FencingFilter;
 * import javax.sql.DataSource;
 *
 * DataSource dataSource = ...; // the service's database, the one its handlers write with
 * FencingFilter fencing =
 *     FencingFilter.builder(dataSource)
 *         .requireFencing(request -> request.getRequestURI().startsWith("/orders/"))
 *         .build();
 * }</pre>
 *
 * <p>Register it as any servlet filter; in Spring Boot, as a bean of {@code
 * FilterRegistrationBean<FencingFilter>} with the URL patterns of the guarded endpoints
 * (docs/fencing.md).
 *
 * <p><b>The response.</b> A fenced request's response is held back ({@link
 * ContentCachingResponseWrapper}) until the transaction has ended, so that no client hears success
 * for writes that did not commit: a commit that fails throws, and the container answers 500. The
 * body is buffered in memory; a handler that calls {@code sendError} or {@code sendRedirect} sends
 * its answer at once, before the filter's rollback (for an error) or commit (for a redirect).
 *
 * <p><b>Limits.</b> The handler must run on the request's thread: the request it sees cannot start
 * async processing ({@code isAsyncSupported()} is false, {@code startAsync} throws {@link
 * IllegalStateException}), so no work of the handler's moves to another thread, where it would
 * write outside the transaction and after its rollback; the filter then rolls back and the request
 * fails. Writes to another database, or on connections not taken through Spring's {@code
 * DataSourceUtils}, are not in the transaction and not fenced. The filter trusts the resource the
 * request names: the token orders the holders of the resource's lock, and a client that names
 * another resource is fenced on that one. See {@link JdbcFence} for the databases and their
 * failures; a database failure of the admission is thrown as a {@link ServletException} (500),
 * after the rollback.
 */
public final class FencingFilter extends OncePerRequestFilter {
  /*
   * Algorithm notes: per request with both headers,
   *   begin (the manager binds a connection of dataSource to this thread);
   *   admit on that connection: stale -> roll back, 409; failure -> roll back, throw;
   *   run the chain with the response buffered; thrown -> roll back, rethrow;
   *   status >= 400 -> roll back, else commit (a failed commit: reset the buffer, rethrow);
   *   send the buffered response.
   * The transaction is never left open: every path out of the method after begin ends it.
   */

  private final DataSource dataSource;
  private final PlatformTransactionManager transactionManager;
  private final JdbcFence fence;
  private final Predicate<HttpServletRequest> required;

  private FencingFilter(Builder builder) {
    this.dataSource = builder.dataSource;
    this.transactionManager =
        builder.transactionManager != null
            ? builder.transactionManager
            : new DataSourceTransactionManager(builder.dataSource);
    this.fence = builder.fence != null ? builder.fence : JdbcFence.of(builder.dataSource);
    this.required = builder.required;
  }

  /**
   * A filter with the defaults: the table {@value JdbcFence#DEFAULT_TABLE}, a {@link
   * DataSourceTransactionManager} of {@code dataSource}, and requests without the headers passed
   * on. The table must exist ({@link JdbcFence#createTableIfMissing()}).
   *
   * @param dataSource the database the handlers write to, as they take it ({@code JdbcTemplate}'s)
   * @return the filter
   * @throws NullPointerException if {@code dataSource} is null
   */
  public static FencingFilter of(DataSource dataSource) {
    return builder(dataSource).build();
  }

  /**
   * A builder of a filter on {@code dataSource}.
   *
   * @param dataSource the database the handlers write to, as they take it ({@code JdbcTemplate}'s)
   * @return the builder
   * @throws NullPointerException if {@code dataSource} is null
   */
  public static Builder builder(DataSource dataSource) {
    return new Builder(dataSource);
  }

  @Override
  protected void doFilterInternal(
      HttpServletRequest request, HttpServletResponse response, FilterChain chain)
      throws ServletException, IOException {
    Optional<FencedRequest> fenced;
    try {
      fenced = FencedRequest.read(request);
    } catch (IllegalArgumentException malformed) {
      Problems.malformed(response, malformed.getMessage());
      return;
    }
    if (fenced.isEmpty()) {
      if (required.test(request)) {
        Problems.required(response, request.getMethod() + " " + request.getRequestURI());
        return;
      }
      chain.doFilter(request, response);
      return;
    }
    fencedChain(fenced.get(), request, response, chain);
  }

  private void fencedChain(
      FencedRequest fenced,
      HttpServletRequest request,
      HttpServletResponse response,
      FilterChain chain)
      throws ServletException, IOException {
    TransactionStatus transaction =
        transactionManager.getTransaction(new DefaultTransactionDefinition());
    try {
      admit(fenced);
    } catch (StaleFencingTokenException stale) {
      transactionManager.rollback(transaction);
      Problems.stale(response, stale);
      return;
    } catch (IllegalArgumentException refused) { // the name is longer than the fence can keep
      transactionManager.rollback(transaction);
      Problems.malformed(
          response,
          FencingHeaders.RESOURCE + " names what the fence cannot keep: " + refused.getMessage());
      return;
    } catch (SQLException failed) {
      rollBack(transaction, failed);
      throw new ServletException(
          "could not admit the fencing token of " + fenced.resource() + ": " + failed, failed);
    } catch (RuntimeException | Error failed) {
      rollBack(transaction, failed);
      throw failed;
    }

    ContentCachingResponseWrapper buffered = new ContentCachingResponseWrapper(response);
    try {
      chain.doFilter(new SynchronousRequest(request), buffered);
    } catch (ServletException | IOException | RuntimeException | Error failed) {
      rollBack(transaction, failed);
      throw failed;
    }
    if (request.isAsyncStarted()) {
      IllegalStateException async =
          new IllegalStateException(
              "the handler of a fenced request started async processing: the fence's transaction"
                  + " is bound to the request's thread, so it was rolled back");
      rollBack(transaction, async);
      throw async;
    }
    if (buffered.getStatus() >= 400) {
      transactionManager.rollback(transaction);
    } else {
      try {
        transactionManager.commit(transaction);
      } catch (RuntimeException failed) {
        if (!response.isCommitted()) {
          buffered.reset(); // the handler's answer is not sent: the container answers 500
        }
        throw failed;
      }
    }
    buffered.copyBodyToResponse();
  }

  private void admit(FencedRequest fenced) throws SQLException {
    Connection connection = DataSourceUtils.getConnection(dataSource);
    try {
      if (!DataSourceUtils.isConnectionTransactional(connection, dataSource)) {
        throw new IllegalStateException(
            "the filter's transaction manager "
                + transactionManager
                + " binds no connection of its DataSource "
                + dataSource
                + ": give it the manager of that DataSource");
      }
      fence.admit(connection, fenced.resource(), fenced.token());
    } finally {
      DataSourceUtils.releaseConnection(connection, dataSource);
    }
  }

  /**
   * The request as the handler sees it: async processing cannot start, so no work of the handler's
   * is handed to another thread, where it would write outside the transaction, after its rollback.
   */
  private static final class SynchronousRequest extends HttpServletRequestWrapper {
    SynchronousRequest(HttpServletRequest request) {
      super(request);
    }

    @Override
    public boolean isAsyncSupported() {
      return false;
    }

    @Override
    public AsyncContext startAsync() {
      throw notAsync();
    }

    @Override
    public AsyncContext startAsync(ServletRequest request, ServletResponse response) {
      throw notAsync();
    }

    private static IllegalStateException notAsync() {
      return new IllegalStateException(
          "a fenced request cannot start async processing: the fence's transaction is bound to the"
              + " request's thread");
    }
  }

  /** Rolls back after {@code cause}, to which a failure of the rollback is added. */
  private void rollBack(TransactionStatus transaction, Throwable cause) {
    try {
      transactionManager.rollback(transaction);
    } catch (RuntimeException | Error rollbackFailed) {
      cause.addSuppressed(rollbackFailed);
    }
  }

  @Override
  public String toString() {
    return "FencingFilter[" + fence + "]";
  }

  /**
   * The options of a {@link FencingFilter}; {@link #build()} makes it. Not thread-safe.
   *
   * @see FencingFilter#builder(DataSource)
   */
  public static final class Builder {
    private final DataSource dataSource;
    private PlatformTransactionManager transactionManager;
    private JdbcFence fence;
    private Predicate<HttpServletRequest> required = request -> false;

    private Builder(DataSource dataSource) {
      this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
    }

    /**
     * The transaction manager whose transaction the admission and the handler share, instead of a
     * new {@link DataSourceTransactionManager} of the data source: the application's own, so that
     * its settings and its {@code @Transactional} methods are the filter's too. It must bind
     * connections of the filter's data source to the thread ({@code DataSourceTransactionManager},
     * or {@code JpaTransactionManager} with a JDBC-aware dialect); a request finds out otherwise
     * with an {@link IllegalStateException}.
     *
     * @param transactionManager the manager
     * @return this builder
     * @throws NullPointerException if {@code transactionManager} is null
     */
    public Builder transactionManager(PlatformTransactionManager transactionManager) {
      this.transactionManager = Objects.requireNonNull(transactionManager, "transactionManager");
      return this;
    }

    /**
     * The fence, instead of {@code JdbcFence.of(dataSource)}: for a table of another name.
     *
     * @param fence the fence; its admissions run on the filter's transaction's connection
     * @return this builder
     * @throws NullPointerException if {@code fence} is null
     */
    public Builder fence(JdbcFence fence) {
      this.fence = Objects.requireNonNull(fence, "fence");
      return this;
    }

    /**
     * Which requests must carry the headers: those for which {@code required} is true and that
     * carry neither header are answered {@code 428 Precondition Required} and not passed on. By
     * default none: a request without the headers is passed on untouched (an unfenced write, if it
     * writes).
     *
     * @param required true for a request that must be fenced
     * @return this builder
     * @throws NullPointerException if {@code required} is null
     */
    public Builder requireFencing(Predicate<HttpServletRequest> required) {
      this.required = Objects.requireNonNull(required, "required");
      return this;
    }

    /**
     * Makes the filter.
     *
     * @return the filter
     */
    public FencingFilter build() {
      return new FencingFilter(this);
    }
  }
}
