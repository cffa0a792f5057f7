// The REST client alone, without the event subscriber (NATS): what a browser bundle imports.
export * from './client.ts';
export * from './errors.ts';
