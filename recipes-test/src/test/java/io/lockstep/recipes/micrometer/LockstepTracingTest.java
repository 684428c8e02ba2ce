package io.lockstep.recipes.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.locks.LockHold;
import io.lockstep.recipes.locks.LockState;
import io.lockstep.recipes.locks.ReentrantMutex;
import io.lockstep.testing.ZooKeeperExtension;
import io.lockstep.testkit.internal.Sessions;
import io.micrometer.common.KeyValue;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.tracing.Span;
import io.micrometer.tracing.Tracer;
import io.micrometer.tracing.handler.DefaultTracingObservationHandler;
import io.micrometer.tracing.otel.bridge.OtelBaggageManager;
import io.micrometer.tracing.otel.bridge.OtelCurrentTraceContext;
import io.micrometer.tracing.otel.bridge.OtelTracer;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.EventData;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.util.List;
import java.util.Optional;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The observations through a real tracer: Micrometer Tracing's OpenTelemetry bridge, the spans
 * exported to memory. What a trace backend would receive.
 */
@Timeout(90)
class LockstepTracingTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  private final InMemorySpanExporter spans = InMemorySpanExporter.create();
  private final SdkTracerProvider provider =
      SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(spans)).build();
  private final OtelCurrentTraceContext current = new OtelCurrentTraceContext();
  private final Tracer tracer =
      new OtelTracer(
          provider.get("lockstep-test"),
          current,
          event -> {},
          new OtelBaggageManager(current, List.of(), List.of()));
  private final ObservationRegistry registry = ObservationRegistry.create();

  {
    registry.observationConfig().observationHandler(new DefaultTracingObservationHandler(tracer));
  }

  @AfterEach
  void closeProvider() {
    provider.close();
  }

  @Test
  void theWaitAndTheHold_areChildSpansOfTheRequestsSpan() throws Exception {
    CuratorFramework client = zk.newClient();
    LockstepObservations.bind(client, registry);
    String path = zk.path("orders");
    ReentrantMutex lock = new ReentrantMutex(client, path);

    Observation request = Observation.start("http.server.requests", registry);
    long token;
    try (Observation.Scope scope = request.openScope()) {
      lock.acquire();
      token = lock.fencingToken();
      lock.release();
    } finally {
      request.stop();
    }

    SpanData requestSpan = span("http.server.requests");
    SpanData wait = span("ReentrantMutex wait");
    SpanData hold = span("ReentrantMutex hold");
    for (SpanData child : List.of(wait, hold)) {
      assertThat(child.getTraceId()).isEqualTo(requestSpan.getTraceId());
      assertThat(child.getParentSpanId()).isEqualTo(requestSpan.getSpanId());
      assertThat(attribute(child, "path")).isEqualTo(path);
      assertThat(attribute(child, "recipe")).isEqualTo("ReentrantMutex");
      assertThat(attribute(child, "token")).isEqualTo(Long.toString(token));
    }
    assertThat(attribute(wait, "outcome")).isEqualTo("GRANTED");
    assertThat(attribute(hold, "state")).isEqualTo("RELEASED");
    assertThat(hold.getStartEpochNanos())
        .as("the hold begins where the wait ends")
        .isGreaterThanOrEqualTo(wait.getEndEpochNanos());
  }

  /** A span of the tracer's own, current in the caller's thread without any observation. */
  @Test
  void aTracersCurrentSpan_withoutAnObservation_isTheWaitsParent_andTheWaitTheHolds()
      throws Exception {
    CuratorFramework client = zk.newClient();
    LockstepObservations.bind(client, registry);
    ReentrantMutex lock = new ReentrantMutex(client, zk.path("a"));

    Span job = tracer.nextSpan().name("job").start();
    try (Tracer.SpanInScope scope = tracer.withSpan(job)) {
      lock.acquire();
      lock.release();
    } finally {
      job.end();
    }

    SpanData jobSpan = span("job");
    SpanData wait = span("ReentrantMutex wait");
    SpanData hold = span("ReentrantMutex hold");
    assertThat(wait.getTraceId()).isEqualTo(jobSpan.getTraceId());
    assertThat(wait.getParentSpanId()).isEqualTo(jobSpan.getSpanId());
    assertThat(hold.getTraceId()).isEqualTo(jobSpan.getTraceId());
    assertThat(hold.getParentSpanId()).isEqualTo(wait.getSpanId());
  }

  @Test
  void aLostHold_isASpanWithTheLossAsAnEvent() throws Exception {
    CuratorFramework client = zk.newClient();
    LockstepObservations.bind(client, registry);
    ReentrantMutex lock = new ReentrantMutex(client, zk.path("a"));

    LockHold hold = lock.hold();
    Sessions.expire(client, zk.server().getConnectString());
    await().until(() -> hold.state() == LockState.LOST);
    await().until(() -> find("ReentrantMutex hold").isPresent());
    hold.close();

    SpanData span = span("ReentrantMutex hold");
    assertThat(attribute(span, "state")).isEqualTo("LOST");
    assertThat(span.getEvents()).extracting(EventData::getName).contains("lock lost");
  }

  /** What docs/tracing.md says: a filter runs before the tracer names the span. */
  @Test
  void anObservationFilter_canPutThePathInTheSpansName() throws Exception {
    CuratorFramework client = zk.newClient();
    registry
        .observationConfig()
        .observationFilter(
            context -> {
              KeyValue path = context.getHighCardinalityKeyValue("path");
              if (context.getName().startsWith("lockstep.") && path != null) {
                context.setContextualName(context.getContextualName() + " " + path.getValue());
              }
              return context;
            });
    LockstepObservations.bind(client, registry);
    String path = zk.path("orders");
    ReentrantMutex lock = new ReentrantMutex(client, path);

    lock.acquire();
    lock.release();

    SpanData wait = span("ReentrantMutex wait " + path);
    assertThat(wait.getParentSpanId()).isEqualTo(SpanContext.getInvalid().getSpanId()); // a root
    assertThat(span("ReentrantMutex hold " + path).getParentSpanId()).isEqualTo(wait.getSpanId());
  }

  private Optional<SpanData> find(String name) {
    return spans.getFinishedSpanItems().stream().filter(s -> s.getName().equals(name)).findFirst();
  }

  private SpanData span(String name) {
    List<SpanData> named =
        spans.getFinishedSpanItems().stream().filter(s -> s.getName().equals(name)).toList();
    assertThat(named)
        .as("the spans named %s among %s", name, spans.getFinishedSpanItems())
        .hasSize(1);
    return named.get(0);
  }

  private static String attribute(SpanData span, String key) {
    return span.getAttributes().get(AttributeKey.stringKey(key));
  }
}
