package io.lockstep.demo;

import io.lockstep.testing.Library;
import io.lockstep.testing.LockPart;
import io.lockstep.testing.Recipe;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorWatcher;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;

/**
 * The demo's bank: accounts stored as ZooKeeper nodes under one root, and the lock paths that guard
 * them.
 *
 * <p>Account {@code i} is the node {@code <root>/accounts/acct-NN} holding its {@link Balance}. Two
 * lock paths belong to it: {@link #lockPath(int)}, a mutex queue that every writer of the account
 * joins (transfers through {@code MultiMutex}, single-account operations through {@code
 * ReentrantMutex} or {@code NonReentrantMutex}), and {@link #auditPath(int)}, a read-write queue
 * where audits read and transfers write. See {@link Workload} for why there are two.
 */
final class Bank {
  /** Every account's opening balance. */
  static final long OPENING_BALANCE = 1_000;

  private final String root;
  private final int accounts;

  private Bank(String root, int accounts) {
    this.root = root;
    this.accounts = accounts;
  }

  /**
   * Creates the accounts under {@code root} (containers are created for the parents, so an
   * abandoned tree disappears once emptied).
   */
  static Bank open(CuratorFramework client, String root, int accounts) throws Exception {
    Bank bank = new Bank(root, accounts);
    List<CuratorOp> creates = new ArrayList<>();
    for (int i = 0; i < accounts; i++) {
      creates.add(
          client
              .transactionOp()
              .create()
              .withMode(CreateMode.PERSISTENT)
              .forPath(bank.accountPath(i), new Balance(OPENING_BALANCE, 0).encode()));
    }
    // A container that never had children is not reaped, but a parent shared with an earlier run
    // (emptied since) may be reaped between its creation and the accounts': make them again then.
    for (int attempt = 1; ; attempt++) {
      client.createContainers(ZKPaths.makePath(root, "accounts"));
      try {
        client.transaction().forOperations(creates);
        return bank;
      } catch (KeeperException.NoNodeException reaped) {
        if (attempt == 5) {
          throw reaped;
        }
      }
    }
  }

  int accounts() {
    return accounts;
  }

  long expectedTotal() {
    return OPENING_BALANCE * accounts;
  }

  String root() {
    return root;
  }

  /** The account's name as printed: {@code acct-07}. */
  static String name(int account) {
    return String.format("acct-%02d", account);
  }

  String accountPath(int account) {
    return ZKPaths.makePath(root, "accounts", name(account));
  }

  /** The mutex queue every writer of the account joins. */
  String lockPath(int account) {
    return ZKPaths.makePath(root, "locks", name(account));
  }

  /** The read-write queue where audits read the account and transfers write it. */
  String auditPath(int account) {
    return ZKPaths.makePath(root, "audit", name(account));
  }

  /**
   * What a transfer locks: both accounts' writer locks (as mutexes) and their audit locks' write
   * side.
   */
  List<LockPart> transferParts(int from, int to) {
    return List.of(
        LockPart.mutex(lockPath(from)),
        LockPart.write(auditPath(from)),
        LockPart.mutex(lockPath(to)),
        LockPart.write(auditPath(to)));
  }

  /** What an audit locks: the read side of every account's audit lock. */
  List<LockPart> auditParts() {
    List<LockPart> parts = new ArrayList<>(accounts);
    for (int i = 0; i < accounts; i++) {
      parts.add(LockPart.read(auditPath(i)));
    }
    return parts;
  }

  /** What reading one balance locks: the read side of the account's audit lock. */
  LockPart balancePart(int account) {
    return LockPart.read(auditPath(account));
  }

  /**
   * What {@code reserve} and {@code settle} lock: the account's writer lock, through {@code
   * ReentrantMutex} and {@code NonReentrantMutex}. Curator's {@code InterProcessSemaphoreMutex}
   * keeps its nodes elsewhere and would not exclude the transfers' {@code InterProcessMutex}, so
   * with Curator both use {@code InterProcessMutex}.
   */
  LockPart accountPart(Operation operation, Library library, int account) {
    Recipe recipe =
        operation == Operation.SETTLE && library == Library.LOCKSTEP
            ? Recipe.NON_REENTRANT_MUTEX
            : Recipe.MUTEX;
    return new LockPart(recipe, lockPath(account));
  }

  Balance read(CuratorFramework client, int account) throws Exception {
    return Balance.decode(client.getData().forPath(accountPath(account)));
  }

  /** Every balance, read one node after another (consistent only under the audit locks). */
  List<Balance> readAll(CuratorFramework client) throws Exception {
    List<Balance> balances = new ArrayList<>(accounts);
    for (int i = 0; i < accounts; i++) {
      balances.add(read(client, i));
    }
    return balances;
  }

  /** A transaction step that sets the account's balance (unconditionally: fence it). */
  CuratorOp write(CuratorFramework client, int account, Balance balance) throws Exception {
    return client.transactionOp().setData().forPath(accountPath(account), balance.encode());
  }

  /**
   * Completes when the account's node next changes, as seen through {@code client}: a one-time
   * watch, so keep {@code client} out of harm's way (a watch dies with its session).
   */
  CompletableFuture<Void> nextChange(CuratorFramework client, int account) throws Exception {
    CompletableFuture<Void> changed = new CompletableFuture<>();
    CuratorWatcher watcher =
        event -> {
          if (event.getType() != Watcher.Event.EventType.None) {
            changed.complete(null);
          }
        };
    var unused = client.getData().usingWatcher(watcher).forPath(accountPath(account));
    return changed;
  }

  /** Deletes the whole tree of this bank, accounts and lock directories. */
  void close(CuratorFramework client) throws Exception {
    client.delete().guaranteed().deletingChildrenIfNeeded().forPath(root);
  }

  /**
   * An account's money: what it may spend and what is set aside for pending payments. Only their
   * sum moves between accounts.
   *
   * @param available money the account may spend or send
   * @param reserved money set aside by {@code reserve} until {@code settle} returns it
   */
  record Balance(long available, long reserved) {
    long total() {
      return available + reserved;
    }

    boolean overdrawn() {
      return available < 0 || reserved < 0;
    }

    Balance plus(long amount) {
      return new Balance(available + amount, reserved);
    }

    /** Sets {@code amount} aside. */
    Balance reserve(long amount) {
      return new Balance(available - amount, reserved + amount);
    }

    /** Returns everything set aside. */
    Balance settle() {
      return new Balance(available + reserved, 0);
    }

    byte[] encode() {
      return (available + " " + reserved).getBytes(StandardCharsets.US_ASCII);
    }

    static Balance decode(byte[] data) {
      String[] parts = new String(data, StandardCharsets.US_ASCII).split(" ");
      return new Balance(Long.parseLong(parts[0]), Long.parseLong(parts[1]));
    }
  }
}
