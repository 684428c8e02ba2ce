package io.lockstep.recipes.boot.app;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.Lock;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.integration.support.locks.LockRegistry;

/** A small Spring Boot application that locks through the auto-configured lock registry. */
@SpringBootApplication
public class BillingApplication {
  /** The service: runs a billing step under the lock of its account. */
  public static final class Billing {
    private final LockRegistry<?> locks;
    private final List<String> billed = new CopyOnWriteArrayList<>();

    Billing(LockRegistry<?> locks) {
      this.locks = locks;
    }

    /** Bills {@code account} under its lock. */
    public void bill(String account) {
      Lock lock = locks.obtain("accounts/" + account);
      lock.lock();
      try {
        billed.add(account);
      } finally {
        lock.unlock();
      }
    }

    /** The accounts billed so far. */
    public List<String> billed() {
      return List.copyOf(billed);
    }
  }

  @Bean
  Billing billing(LockRegistry<?> locks) {
    return new Billing(locks);
  }
}
