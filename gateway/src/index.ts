import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { connectBus } from '@kn/bus';
import { type AppError, headerFieldsTooLarge, validationError } from '@kn/contracts';
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
    server.on('clientError', answerClientError);
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

/**
 * What Node's HTTP server answers itself, before express sees a request (a request line and headers
 * over its 16 KiB, or no HTTP at all), in the contract's error shape: 431 HeaderFieldsTooLarge,
 * 400 ValidationError otherwise; a request that took too long its 408, as Node answers it.
 */
function answerClientError(err: Error & { code?: string }, socket: Duplex) {
  if (!socket.writable || err.code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    socket.end('HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n');
    return;
  }
  const error: AppError =
    err.code === 'HPE_HEADER_OVERFLOW' ? headerFieldsTooLarge() : validationError('the request is not well-formed HTTP/1.1');
  const body = JSON.stringify(error.toBody());
  socket.end(
    [
      `HTTP/1.1 ${error.status} ${error.status === 431 ? 'Request Header Fields Too Large' : 'Bad Request'}`,
      'Content-Type: application/json; charset=utf-8',
      `Content-Length: ${Buffer.byteLength(body)}`,
      `X-Request-Id: ${randomUUID()}`,
      'X-Content-Type-Options: nosniff',
      'Connection: close',
      '',
      body,
    ].join('\r\n'),
  );
}
