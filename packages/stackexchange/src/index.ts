export * from './importer.ts';
export * from './reader.ts';
export * from './rows.ts';
export * from './site.ts';
