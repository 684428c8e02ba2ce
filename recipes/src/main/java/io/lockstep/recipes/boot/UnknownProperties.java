package io.lockstep.recipes.boot;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.EnumerablePropertySource;
import org.springframework.core.env.Environment;
import org.springframework.core.env.PropertySource;

/**
 * The {@code lockstep.*} keys of the application's configuration that no Lockstep property has: a
 * mistyped key ({@code lockstep.zookeeper.connect} for {@code connect-string}) is otherwise read by
 * nothing, silently. Keys are compared as Spring Boot binds them (relaxed: {@code connectString}
 * and {@code connect-string} are one key); the known ones are the setters of the
 * {@code @ConfigurationProperties} classes and the switches the auto-configurations read.
 */
final class UnknownProperties {
  private static final List<ConfigurationPropertyName> KNOWN = known();

  private UnknownProperties() {}

  /**
   * The unknown {@code lockstep.*} keys of {@code environment}'s named property sources, sorted.
   */
  static Set<String> of(Environment environment) {
    Set<String> unknown = new TreeSet<>();
    if (!(environment instanceof ConfigurableEnvironment configurable)) {
      return unknown;
    }
    for (PropertySource<?> source : configurable.getPropertySources()) {
      if (source instanceof EnumerablePropertySource<?> enumerable) {
        for (String key : enumerable.getPropertyNames()) {
          if (key.startsWith("lockstep.") && !isKnown(key)) {
            unknown.add(key);
          }
        }
      }
    }
    return unknown;
  }

  private static boolean isKnown(String key) {
    ConfigurationPropertyName name = ConfigurationPropertyName.adapt(key, '.');
    for (ConfigurationPropertyName known : KNOWN) {
      if (known.equals(name) || known.isAncestorOf(name)) { // a list's or map's elements
        return true;
      }
    }
    return false;
  }

  private static List<ConfigurationPropertyName> known() {
    List<String> keys = new ArrayList<>();
    addSetters("lockstep.zookeeper", LockstepZookeeperProperties.class, keys);
    addSetters("lockstep.registry", LockstepRegistryProperties.class, keys);
    addSetters("lockstep.inspector", LockstepInspectorProperties.class, keys);
    keys.addAll(
        List.of(
            "lockstep.zookeeper.enabled",
            "lockstep.registry.enabled",
            "lockstep.metrics.enabled",
            "lockstep.observations.enabled",
            "lockstep.locked.enabled",
            "lockstep.locked.default-ttl"));
    List<ConfigurationPropertyName> names = new ArrayList<>();
    for (String key : keys) {
      names.add(ConfigurationPropertyName.of(key));
    }
    return List.copyOf(names);
  }

  /**
   * {@code prefix.<kebab-case of each setter>}, and below {@code prefix.<getter>} the setters of a
   * nested properties class that a getter returns (as {@code retry}).
   */
  private static void addSetters(String prefix, Class<?> type, List<String> keys) {
    for (Method method : type.getMethods()) {
      if (Modifier.isStatic(method.getModifiers())) {
        continue;
      }
      if (method.getName().startsWith("set") && method.getParameterCount() == 1) {
        keys.add(prefix + "." + kebab(method.getName().substring(3)));
      } else if (method.getName().startsWith("get")
          && method.getParameterCount() == 0
          && method.getReturnType().getEnclosingClass() == type) {
        addSetters(
            prefix + "." + kebab(method.getName().substring(3)), method.getReturnType(), keys);
      }
    }
  }

  private static String kebab(String camel) {
    StringBuilder kebab = new StringBuilder();
    for (int i = 0; i < camel.length(); i++) {
      char c = camel.charAt(i);
      if (Character.isUpperCase(c) && i > 0) {
        kebab.append('-');
      }
      kebab.append(Character.toLowerCase(c));
    }
    return kebab.toString();
  }
}
