package io.lockstep.recipes.boot;

import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;

/**
 * Spring Boot's report of a Lockstep startup failure: the description and action of the {@link
 * LockstepStartupFailure} found anywhere in the failure's chain of causes, instead of a stack trace
 * five causes deep. Registered in {@code META-INF/spring.factories}.
 */
final class LockstepFailureAnalyzer implements FailureAnalyzer {
  @Override
  public FailureAnalysis analyze(Throwable failure) {
    for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
      if (cause instanceof LockstepStartupFailure lockstep) {
        return new FailureAnalysis(lockstep.description(), lockstep.action(), cause);
      }
      if (cause.getCause() == cause) {
        break;
      }
    }
    return null;
  }
}
