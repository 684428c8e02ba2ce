package io.lockstep.recipes.fence.http;

import io.lockstep.testing.PostgresExtension;
import javax.sql.DataSource;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@link FencingFilter} on a real PostgreSQL server (see {@link PostgresExtension}). */
class FencingFilterPostgresTest extends FencingFilterContract {
  @RegisterExtension static final PostgresExtension postgres = new PostgresExtension();

  @Override
  DataSource database() {
    return postgres.dataSource();
  }
}
