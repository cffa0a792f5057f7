package org.kn.searchcluster;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.opensearch.analysis.common.CommonAnalysisPlugin;
import org.opensearch.common.logging.LogConfigurator;
import org.opensearch.common.settings.Settings;
import org.opensearch.env.Environment;
import org.opensearch.node.InternalSettingsPreparer;
import org.opensearch.node.Node;
import org.opensearch.painless.PainlessPlugin;
import org.opensearch.plugins.Plugin;
import org.opensearch.transport.Netty4Plugin;

/**
 * One OpenSearch node in this JVM, for infra/search-cluster.sh: the real REST API (Netty), the
 * common analyzers and Painless, loaded from the classpath instead of a distribution's modules/
 * folder. Arguments are OpenSearch settings, each {@code key=value}; {@code path.home} is required.
 * Runs until the process is stopped (SIGTERM closes the node cleanly). No bootstrap checks, no
 * security manager, no keystore: a node for this machine's loopback only.
 */
public final class SearchNode {
    private static final List<Class<? extends Plugin>> PLUGINS = List.of(
        Netty4Plugin.class,
        CommonAnalysisPlugin.class,
        PainlessPlugin.class
    );

    /** {@link Node}'s constructor that takes classpath plugins is protected. */
    private static final class ClasspathNode extends Node {
        ClasspathNode(Environment environment) {
            super(environment, PLUGINS, true);
        }
    }

    public static void main(String[] args) throws Exception {
        Settings.Builder builder = Settings.builder();
        for (String arg : args) {
            int eq = arg.indexOf('=');
            if (eq <= 0) {
                System.err.println("search-node: arguments are settings, key=value; got: " + arg);
                System.exit(2);
            }
            builder.put(arg.substring(0, eq), arg.substring(eq + 1));
        }
        Settings settings = builder.build();
        String home = settings.get("path.home");
        if (home == null) {
            System.err.println("search-node: path.home=... is required");
            System.exit(2);
        }
        // PluginsService lists these folders; the plugins themselves come from the classpath.
        for (String folder : new String[] { "config", "modules", "plugins" }) {
            Files.createDirectories(Path.of(home, folder));
        }
        // Logs go to the console (the script sends them to the node's log file), INFO and up.
        Path logConfig = Path.of(home, "config", "log4j2.properties");
        if (!Files.exists(logConfig)) {
            Files.writeString(logConfig, String.join("\n",
                "status = error",
                "appender.console.type = Console",
                "appender.console.name = console",
                "appender.console.layout.type = PatternLayout",
                "appender.console.layout.pattern = [%d{ISO8601}][%-5p][%-25c{1.}] %m%n",
                "rootLogger.level = info",
                "rootLogger.appenderRef.console.ref = console",
                ""));
        }
        String name = settings.get("node.name", "search-node");
        Environment environment = InternalSettingsPreparer.prepareEnvironment(settings, Map.of(), null, () -> name);
        LogConfigurator.registerErrorListener();
        LogConfigurator.configure(environment);
        Node node = new ClasspathNode(environment);
        CountDownLatch closed = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                node.close();
                node.awaitClose(20, TimeUnit.SECONDS);
            } catch (Exception e) {
                e.printStackTrace();
            } finally {
                closed.countDown();
            }
        }, "search-node-shutdown"));
        try {
            node.start();
        } catch (Exception e) {
            e.printStackTrace();
            System.err.println("search-node: " + name + " failed to start: " + e);
            System.exit(1);
        }
        // The node's own threads may all be daemons: this one keeps the JVM up until it is stopped.
        closed.await();
    }
}
