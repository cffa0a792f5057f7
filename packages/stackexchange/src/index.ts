export * from './importer.ts';
export * from './reader.ts';
export * from './rows.ts';
