export * from './reader.ts';
export * from './rows.ts';
