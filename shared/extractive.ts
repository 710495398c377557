export * from './extractive/index.ts';
