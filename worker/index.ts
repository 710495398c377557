/**
 * The worker entry of the package (`@agent-compactor/compactor/worker`): what a service needs to run
 * compactor's workers in its own process instead of `compactor worker`. Needs the worker's peer
 * dependencies (the Anthropic SDK, pino, prom-client) installed beside the package.
 */
export { type Config, ConfigError, loadConfig } from './config/config.ts';
export {
  MIGRATIONS_FOLDER,
  type MigrateOptions,
  type MigrateReport,
  migrateDatabase,
} from './postgres/migrate.ts';
export { purgeSessions } from './postgres/purge.ts';
export { type CompactionWorker, startWorker, type WorkerOptions } from './queue/compaction/worker.ts';
export { createLogger } from './runtime/logger.ts';
export { type InstallReport, migrateInstall } from './runtime/migrate-install.ts';
export { openServices, type ServiceOverrides, type Services } from './runtime/services.ts';
export {
  createOpenAICompactionSummarizer,
  type OpenAICompactionSummarizerOptions,
} from './summarizers/openai-compaction.ts';
