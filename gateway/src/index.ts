import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connectBus } from '@kn/bus';
import { createLogger, createMetrics, initTracing, serveMetrics } from '@kn/telemetry';
import { createApp } from './app.ts';
import type { GatewayConfig } from './config.ts';

export { BASE, createApp } from './app.ts';
export { GatewayConfig, loadConfig } from './config.ts';

export async function start(config: GatewayConfig) {
  const logger = createLogger('gateway', config.LOG_LEVEL);
  initTracing('gateway', { otlpEndpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT });
  const metrics = createMetrics('gateway');
  const bus = await connectBus({ url: config.NATS_URL, namespace: config.NATS_NAMESPACE, name: 'gateway', logger, metrics });
  const app = createApp({ bus, config, logger });
  const metricsServer = await serveMetrics(metrics, config.METRICS_PORT, () => !bus.nc.isClosed());
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(config.PORT, config.HOST, () => resolve(s));
  });
  server.keepAliveTimeout = 65_000;
  const { port } = server.address() as AddressInfo;
  const url = `http://${config.HOST === '0.0.0.0' ? '127.0.0.1' : config.HOST}:${port}`;
  const metricsUrl = `http://127.0.0.1:${(metricsServer.address() as AddressInfo).port}/metrics`;
  logger.info({ url: `${url}/api/v1`, metrics: metricsUrl }, 'gateway listening');
  return {
    app,
    url,
    metricsUrl,
    stop: async () => {
      // Stop accepting connections, let requests under way finish, then leave NATS.
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      await bus.close();
      await new Promise<void>((resolve) => metricsServer.close(() => resolve()));
    },
  };
}
