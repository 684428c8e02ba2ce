package io.lockstep.recipes.boot;

/**
 * Why Lockstep's auto-configuration could not start, with what to do about it: the {@link
 * LockstepFailureAnalyzer} turns it into Spring Boot's failure report, however deep the bean
 * creation exceptions wrap it. A bad property is an {@link IllegalArgumentException}, a server not
 * reached an {@link IllegalStateException}, as before.
 */
interface LockstepStartupFailure {
  /** What went wrong, as the exception's message says it. */
  String getMessage();

  /** What went wrong, for the report's description. */
  default String description() {
    return "Lockstep could not start: " + getMessage() + ".";
  }

  /** What to do, for the report's action. */
  String action();

  /** A property that is out of range, blank or missing. */
  final class BadPropertyException extends IllegalArgumentException
      implements LockstepStartupFailure {
    private static final long serialVersionUID = 1L;

    /** The property to set. */
    private final String property;

    BadPropertyException(String property, String message) {
      super(message);
      this.property = property;
    }

    @Override
    public String action() {
      return "Set "
          + property
          + " to a valid value in the application's configuration (docs/spring-boot.md lists"
          + " the lockstep.* properties and their defaults).";
    }
  }

  /** ZooKeeper not reached within {@code lockstep.zookeeper.startup-wait}. */
  final class NotReachedException extends IllegalStateException implements LockstepStartupFailure {
    private static final long serialVersionUID = 1L;

    /** The servers not reached. */
    private final String connectString;

    NotReachedException(String connectString, String message) {
      super(message);
      this.connectString = connectString;
    }

    @Override
    public String action() {
      return "Check that ZooKeeper runs at "
          + connectString
          + " and that lockstep.zookeeper.connect-string names it (a mistyped key, such as"
          + " lockstep.zookeeper.connect, is not read: the startup log warns of unknown"
          + " lockstep.* keys), or set lockstep.zookeeper.startup-wait=0 to start without"
          + " waiting for the first connection.";
    }
  }
}
