/**
 * Fencing over HTTP, for a guarded resource behind a service: a header convention that carries a
 * lock holder's fencing token and the resource's name ({@link
 * io.lockstep.recipes.fence.http.FencingHeaders}), the client's side that sends them ({@link
 * io.lockstep.recipes.fence.http.FencingClientInterceptor} for {@code RestClient} and {@code
 * RestTemplate}, {@link io.lockstep.recipes.fence.http.FencingExchangeFilter} for {@code
 * WebClient}), and the service's side, a servlet filter that admits the token through a {@link
 * io.lockstep.recipes.fence.JdbcFence} in one transaction with the handler's own writes and answers
 * {@code 409 Conflict} to a stale one ({@link io.lockstep.recipes.fence.http.FencingFilter}).
 *
 * <p>Needs {@code spring-web} on the class path, {@code spring-webflux} for the {@code WebClient}
 * filter, and {@code spring-jdbc} and the Servlet API (6.1) for the servlet filter, which the
 * library does not bring (optional dependencies); the rest of the library never loads this package.
 * See docs/fencing.md.
 */
package io.lockstep.recipes.fence.http;
