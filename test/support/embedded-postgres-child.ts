/**
 * A process that starts the embedded PostgreSQL in the folder its first argument names, prints
 * one JSON line (url, dir, runAs, initialised) and keeps it until SIGTERM, which stops the cluster
 * and exits 0. SIGKILL leaves the cluster running, as a killed compactor process would.
 */
import { startEmbeddedPostgres } from '../../worker/runtime/embedded-postgres.ts';

const cluster = await startEmbeddedPostgres({ dir: process.argv[2] });
// Before the line that tells the test it may send SIGTERM.
process.once('SIGTERM', () => {
  cluster.stop().then(
    () => process.exit(0),
    () => process.exit(1),
  );
});
const { url, dir, runAs, initialised } = cluster;
process.stdout.write(`${JSON.stringify({ url, dir, runAs, initialised })}\n`);
setInterval(() => {}, 60_000);
