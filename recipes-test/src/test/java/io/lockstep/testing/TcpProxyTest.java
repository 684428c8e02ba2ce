package io.lockstep.testing;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lockstep.testkit.internal.TcpProxy;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60)
class TcpProxyTest {
  private static final Duration WAIT = Duration.ofSeconds(10);
  private static final int SHORT_READ_TIMEOUT_MILLIS = 300;

  private final Set<Socket> clients = ConcurrentHashMap.newKeySet();

  // Set before each test by startEchoServerAndProxy; used only by JUnit's test thread.
  private EchoServer echo;
  private TcpProxy proxy;

  @BeforeEach
  void startEchoServerAndProxy() throws IOException {
    echo = new EchoServer();
    proxy = TcpProxy.start("127.0.0.1", echo.port());
  }

  @AfterEach
  void closeEverything() throws IOException {
    for (Socket client : clients) {
      client.close();
    }
    proxy.close();
    echo.close();
  }

  @Test
  @Timeout(20)
  void forwardsBytesBothWays() throws IOException {
    Socket client = connect();

    assertThat(roundTrip(client, "hello")).isEqualTo("hello");
    assertThat(roundTrip(client, "again")).isEqualTo("again");

    assertThat(echo.received()).isEqualTo("helloagain");
    assertThat(proxy.connectString()).isEqualTo("127.0.0.1:" + proxy.port());
    assertThat(proxy.openConnections()).isEqualTo(1);
  }

  @Test
  @Timeout(20)
  void cutClosesOpenConnectionsAndNewOnesUntilHeal() throws IOException {
    Socket before = connect();
    assertThat(roundTrip(before, "before")).isEqualTo("before");

    proxy.cut();

    assertClosedByPeer(before);
    await().atMost(WAIT).until(() -> proxy.openConnections() == 0);
    Socket during = connect();
    send(during, "during");
    assertClosedByPeer(during);
    assertThat(echo.received()).isEqualTo("before");

    proxy.heal();

    Socket after = connect();
    assertThat(roundTrip(after, "after")).isEqualTo("after");
    assertThat(echo.received()).isEqualTo("beforeafter");
  }

  @Test
  @Timeout(20)
  void blackholeDropsBytesWithoutClosingUntilHeal() throws IOException {
    Socket idle = connect();
    Socket talking = connect();
    assertThat(roundTrip(idle, "idle")).isEqualTo("idle");
    assertThat(roundTrip(talking, "talking")).isEqualTo("talking");

    proxy.blackhole();

    send(talking, "lost");
    assertNothingArrives(talking);
    Socket during = connect();
    send(during, "also-lost");
    assertNothingArrives(during);
    await()
        .during(Duration.ofMillis(SHORT_READ_TIMEOUT_MILLIS))
        .atMost(WAIT)
        .until(() -> echo.received().equals("idletalking"));
    assertThat(proxy.openConnections()).isEqualTo(3);

    proxy.heal();

    assertClosedByPeer(talking);
    assertClosedByPeer(during);
    assertThat(roundTrip(idle, "kept")).as("a connection that lost nothing").isEqualTo("kept");
    Socket after = connect();
    assertThat(roundTrip(after, "after")).isEqualTo("after");
    await().atMost(WAIT).until(() -> proxy.openConnections() == 2);
  }

  @Test
  @Timeout(20)
  void latencyDelaysEachDirection() throws IOException {
    Socket client = connect();
    assertThat(roundTrip(client, "warm-up")).isEqualTo("warm-up");

    proxy.setLatency(200);
    long start = System.nanoTime();
    String answer = roundTrip(client, "slow");
    Duration elapsed = Duration.ofNanos(System.nanoTime() - start);

    assertThat(answer).isEqualTo("slow");
    assertThat(elapsed).as("200 ms each way").isGreaterThanOrEqualTo(Duration.ofMillis(400));
  }

  @Test
  @Timeout(20)
  void aLatencyBelowAMillisecond_delaysEachDirectionByThatMuch() throws IOException {
    Socket client = connect();
    assertThat(roundTrip(client, "warm-up")).isEqualTo("warm-up");

    proxy.setLatency(Duration.ofNanos(500_000));
    long start = System.nanoTime();
    for (int i = 0; i < 20; i++) {
      assertThat(roundTrip(client, "slow-" + i)).isEqualTo("slow-" + i);
    }
    Duration elapsed = Duration.ofNanos(System.nanoTime() - start);

    assertThat(elapsed)
        .as("20 round trips of 0.5 ms each way")
        .isGreaterThanOrEqualTo(Duration.ofMillis(20));
    assertThatThrownBy(() -> proxy.setLatency(Duration.ofNanos(-1)))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  @Timeout(20)
  void loweringLatencyKeepsOrder() throws IOException {
    Socket client = connect();
    proxy.setLatency(1_000);
    send(client, "first,");
    await("the first chunk held back")
        .during(Duration.ofMillis(100))
        .atMost(Duration.ofMillis(500))
        .until(() -> echo.received().isEmpty());

    proxy.setLatency(0);
    send(client, "second");

    assertThat(readExactly(client, "first,second".length())).isEqualTo("first,second");
    assertThat(roundTrip(client, "fast")).isEqualTo("fast");
  }

  @Test
  @Timeout(20)
  void loseNextResponseForwardsTheRequestButNotItsAnswer() throws Exception {
    Socket client = connect();
    assertThat(roundTrip(client, "warm-up")).isEqualTo("warm-up");

    proxy.loseNextResponse(500);
    assertThat(proxy.awaitResponseLost(100, TimeUnit.MILLISECONDS))
        .as("fired before any request")
        .isFalse();
    long start = System.nanoTime();
    send(client, "request");

    assertThat(proxy.awaitResponseLost(10, TimeUnit.SECONDS)).isTrue();
    await().atMost(WAIT).until(() -> echo.received().equals("warm-uprequest"));
    client.setSoTimeout((int) WAIT.toMillis());
    assertThat(readOrEndOfStream(client)).as("first read after the request").isEqualTo(-1);
    assertThat(Duration.ofNanos(System.nanoTime() - start))
        .as("closed after closeAfterMillis")
        .isGreaterThanOrEqualTo(Duration.ofMillis(500));

    Socket reconnected = connect();
    assertThat(roundTrip(reconnected, "retry")).as("one-shot fault").isEqualTo("retry");
    assertThat(echo.received()).isEqualTo("warm-uprequestretry");
  }

  @Test
  @Timeout(20)
  void closeClosesConnectionsAndStopsAccepting() throws IOException {
    Socket client = connect();
    assertThat(roundTrip(client, "hello")).isEqualTo("hello");
    int port = proxy.port();

    proxy.close();

    assertClosedByPeer(client);
    assertThat(proxy.openConnections()).isZero();
    String received = echo.received();
    try (Socket late = new Socket(InetAddress.getLoopbackAddress(), port)) {
      // Another process took the freed port meanwhile (tests run beside other servers): whatever
      // answers there, it is not the proxy, which neither counts nor forwards the connection.
      late.getOutputStream().write("late".getBytes(java.nio.charset.StandardCharsets.UTF_8));
      assertThat(proxy.openConnections()).isZero();
      assertThat(echo.received()).isEqualTo(received);
    } catch (IOException refused) {
      // the usual case: nothing listens on the port any more
    }
  }

  @Test
  @Timeout(20)
  void awaitResponseLostNeedsAnArmedFault() {
    assertThatThrownBy(() -> proxy.awaitResponseLost(1, TimeUnit.MILLISECONDS))
        .isInstanceOf(IllegalStateException.class);
  }

  private Socket connect() throws IOException {
    Socket socket = new Socket();
    clients.add(socket);
    socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), proxy.port()), 5_000);
    socket.setTcpNoDelay(true);
    socket.setSoTimeout((int) WAIT.toMillis());
    return socket;
  }

  private static void send(Socket socket, String text) throws IOException {
    OutputStream out = socket.getOutputStream();
    out.write(text.getBytes(UTF_8));
    out.flush();
  }

  private static String roundTrip(Socket socket, String text) throws IOException {
    send(socket, text);
    return readExactly(socket, text.getBytes(UTF_8).length);
  }

  private static String readExactly(Socket socket, int length) throws IOException {
    byte[] bytes = socket.getInputStream().readNBytes(length);
    return new String(bytes, UTF_8);
  }

  /** One byte, or -1 at end of stream; a reset counts as end of stream. */
  private static int readOrEndOfStream(Socket socket) throws IOException {
    try {
      return socket.getInputStream().read();
    } catch (SocketTimeoutException e) {
      throw e;
    } catch (SocketException e) {
      return -1; // connection reset
    }
  }

  private static void assertClosedByPeer(Socket socket) throws IOException {
    socket.setSoTimeout((int) WAIT.toMillis());
    assertThat(readOrEndOfStream(socket)).as("read after the proxy closed").isEqualTo(-1);
  }

  private static void assertNothingArrives(Socket socket) throws IOException {
    socket.setSoTimeout(SHORT_READ_TIMEOUT_MILLIS);
    assertThatThrownBy(() -> socket.getInputStream().read())
        .as("a read on a blackholed connection")
        .isInstanceOf(SocketTimeoutException.class);
  }

  /** Echoes every byte back on each connection and records all it received, in order. */
  private static final class EchoServer implements AutoCloseable {
    private final ServerSocket listener;
    private final ByteArrayOutputStream received = new ByteArrayOutputStream();
    private final Set<Socket> connections = ConcurrentHashMap.newKeySet();
    private final AtomicInteger connectionNumber = new AtomicInteger();

    EchoServer() throws IOException {
      listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
      Thread acceptor = new Thread(this::acceptLoop, "echo-server");
      acceptor.setDaemon(true);
      acceptor.start();
    }

    int port() {
      return listener.getLocalPort();
    }

    String received() {
      return received.toString(UTF_8);
    }

    private void acceptLoop() {
      try {
        while (true) {
          Socket socket = listener.accept();
          connections.add(socket);
          Thread echoer =
              new Thread(() -> echo(socket), "echo-" + connectionNumber.incrementAndGet());
          echoer.setDaemon(true);
          echoer.start();
        }
      } catch (IOException e) {
        // closed
      }
    }

    private void echo(Socket socket) {
      byte[] buffer = new byte[4096];
      try (socket) {
        InputStream in = socket.getInputStream();
        OutputStream out = socket.getOutputStream();
        int count;
        while ((count = in.read(buffer)) >= 0) {
          received.write(buffer, 0, count);
          out.write(buffer, 0, count);
        }
      } catch (IOException e) {
        // closed by the peer or by close()
      } finally {
        connections.remove(socket);
      }
    }

    @Override
    public void close() throws IOException {
      listener.close();
      for (Socket socket : connections) {
        socket.close();
      }
    }
  }
}
