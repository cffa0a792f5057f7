import { createServer, type Server } from 'node:http';
import { connectBus } from '@kn/bus';
import { type Clock, listen, listenUrl, natsProblem, serveMetrics, startSteps, systemClock } from '@kn/service';
import { createLogger, createMetrics, initTracing } from '@kn/telemetry';
import { createApp } from './app.ts';
import type { GatewayConfig } from './config.ts';

export { BASE, createApp } from './app.ts';
export { GatewayConfig, loadConfig } from './config.ts';

export async function start(config: GatewayConfig, options: { clock?: Clock } = {}) {
  const logger = createLogger('gateway', config.LOG_LEVEL);
  await initTracing('gateway', { otlpEndpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT });
  const metrics = createMetrics('gateway');
  const bus = await startSteps(config, logger)('NATS_URL', natsProblem, () =>
    connectBus({
      url: config.NATS_URL,
      user: config.NATS_USER,
      password: config.NATS_PASSWORD,
      namespace: config.NATS_NAMESPACE,
      name: 'gateway',
      logger,
      metrics,
    }),
  );
  const closing: Array<() => Promise<void>> = [() => bus.close()];
  const close = async () => {
    for (const c of closing.reverse()) await c().catch(() => {});
  };
  try {
    const { app, stop: stopApp } = createApp({ bus, config, logger, clock: options.clock ?? systemClock });
    closing.push(stopApp);
    const { server: metricsHttp, url: metricsUrl } = await serveMetrics(metrics, bus, config);
    closing.push(() => new Promise<void>((resolve) => metricsHttp.close(() => resolve())));
    const server: Server = await listen(createServer(app), 'PORT', config.PORT, config.HOST);
    server.keepAliveTimeout = 65_000;
    const url = listenUrl(server, config.HOST);
    logger.info({ url: `${url}/api/v1`, metrics: metricsUrl }, 'gateway listening');
    return {
      app,
      url,
      logger,
      metricsUrl,
      stop: async () => {
        // Stop accepting connections, let requests under way finish, then leave NATS.
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeIdleConnections();
        });
        await close();
      },
    };
  } catch (err) {
    await close();
    throw err;
  }
}
