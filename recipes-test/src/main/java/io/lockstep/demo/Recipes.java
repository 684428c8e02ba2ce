package io.lockstep.demo;

import io.lockstep.recipes.locks.MultiMutex;
import io.lockstep.recipes.locks.NonReentrantMutex;
import io.lockstep.recipes.locks.ReadWriteMutex;
import io.lockstep.recipes.locks.ReentrantMutex;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Consumer;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMultiLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;

/**
 * The lock recipes one run of the workload uses for each {@link Operation}: Lockstep's, or
 * Curator's for comparison. Both take the same queues on the same paths (see {@link Bank}).
 */
interface Recipes {
  /** The library's name as printed. */
  String name();

  /** Whether writes carry ownership checks; false for Curator, whose writes are unfenced. */
  boolean fenced();

  /** The recipe used for {@code operation}, as printed. */
  String recipe(Operation operation, int accounts);

  /**
   * A lock on both accounts of a transfer: their writer locks and their audit locks' write side.
   */
  Guard transfer(CuratorFramework client, Bank bank, int from, int to);

  /** A lock on the read side of every account's audit lock. */
  Guard audit(CuratorFramework client, Bank bank);

  /** A lock on the read side of one account's audit lock. */
  Guard balance(CuratorFramework client, Bank bank, int account);

  /**
   * A lock on one account's writer lock, for {@link Operation#RESERVE} or {@link Operation#SETTLE}.
   */
  Guard single(Operation operation, CuratorFramework client, Bank bank, int account);

  /** Lockstep's recipes: every acquisition atomic, every write fenced. */
  static Recipes lockstep() {
    return new Lockstep();
  }

  /** Curator's recipes, in a fixed global path order because its multi-lock is not atomic. */
  static Recipes curator() {
    return new Curator();
  }

  /** Lockstep's recipes. */
  final class Lockstep implements Recipes {
    @Override
    public String name() {
      return "Lockstep";
    }

    @Override
    public boolean fenced() {
      return true;
    }

    @Override
    public String recipe(Operation operation, int accounts) {
      return switch (operation) {
        case TRANSFER -> "MultiMutex (2 mutex + 2 write)";
        case AUDIT -> "MultiMutex (" + accounts + " read)";
        case BALANCE -> "ReadWriteMutex.readLock()";
        case RESERVE -> "ReentrantMutex";
        case SETTLE -> "NonReentrantMutex";
      };
    }

    /**
     * One atomic multi-lock; the paths are listed in random order, which is safe because {@code
     * MultiMutex} enqueues in all of them in one transaction.
     */
    @Override
    public Guard transfer(CuratorFramework client, Bank bank, int from, int to) {
      List<Consumer<MultiMutex.Builder>> paths = new ArrayList<>();
      for (int account : List.of(from, to)) {
        paths.add(builder -> builder.mutex(bank.lockPath(account)));
        paths.add(builder -> builder.write(bank.auditPath(account)));
      }
      Collections.shuffle(paths, ThreadLocalRandom.current());
      MultiMutex.Builder builder = MultiMutex.builder(client);
      paths.forEach(path -> path.accept(builder));
      return new Guard(builder.build());
    }

    @Override
    public Guard audit(CuratorFramework client, Bank bank) {
      List<Integer> accounts = new ArrayList<>();
      for (int i = 0; i < bank.accounts(); i++) {
        accounts.add(i);
      }
      Collections.shuffle(accounts, ThreadLocalRandom.current());
      MultiMutex.Builder builder = MultiMutex.builder(client);
      accounts.forEach(account -> builder.read(bank.auditPath(account)));
      return new Guard(builder.build());
    }

    @Override
    public Guard balance(CuratorFramework client, Bank bank, int account) {
      return new Guard(new ReadWriteMutex(client, bank.auditPath(account)).readLock());
    }

    @Override
    public Guard single(Operation operation, CuratorFramework client, Bank bank, int account) {
      String path = bank.lockPath(account);
      return new Guard(
          operation == Operation.RESERVE
              ? new ReentrantMutex(client, path)
              : new NonReentrantMutex(client, path));
    }
  }

  /**
   * Curator's recipes. {@code InterProcessMultiLock} takes its locks one after another, so two
   * transfers listing shared paths in different orders could deadlock: every multi-lock here lists
   * its locks in one global order (by account, the writer lock before the audit lock). Curator's
   * {@code InterProcessSemaphoreMutex} keeps its nodes elsewhere and would not exclude the
   * transfers' {@code InterProcessMutex}, so both single-account operations use {@code
   * InterProcessMutex}.
   */
  final class Curator implements Recipes {
    @Override
    public String name() {
      return "Curator";
    }

    @Override
    public boolean fenced() {
      return false;
    }

    @Override
    public String recipe(Operation operation, int accounts) {
      return switch (operation) {
        case TRANSFER -> "InterProcessMultiLock (4)";
        case AUDIT -> "InterProcessMultiLock (" + accounts + ")";
        case BALANCE -> "InterProcessReadWriteLock.readLock()";
        case RESERVE, SETTLE -> "InterProcessMutex";
      };
    }

    @Override
    public Guard transfer(CuratorFramework client, Bank bank, int from, int to) {
      List<InterProcessLock> locks = new ArrayList<>();
      for (int account : List.of(Math.min(from, to), Math.max(from, to))) {
        locks.add(new InterProcessMutex(client, bank.lockPath(account)));
        locks.add(new InterProcessReadWriteLock(client, bank.auditPath(account)).writeLock());
      }
      return new Guard(new InterProcessMultiLock(locks));
    }

    @Override
    public Guard audit(CuratorFramework client, Bank bank) {
      List<InterProcessLock> locks = new ArrayList<>();
      for (int i = 0; i < bank.accounts(); i++) {
        locks.add(new InterProcessReadWriteLock(client, bank.auditPath(i)).readLock());
      }
      return new Guard(new InterProcessMultiLock(locks));
    }

    @Override
    public Guard balance(CuratorFramework client, Bank bank, int account) {
      return new Guard(new InterProcessReadWriteLock(client, bank.auditPath(account)).readLock());
    }

    @Override
    public Guard single(Operation operation, CuratorFramework client, Bank bank, int account) {
      return new Guard(new InterProcessMutex(client, bank.lockPath(account)));
    }
  }
}
