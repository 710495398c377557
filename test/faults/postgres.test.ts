/**
 * Fault injection on Postgres: the worker's connection terminated by the server in the middle of
 * the apply transaction (rolled back, the event retried and applied once), and Postgres unreachable
 * when the worker starts (it says so, keeps retrying, and proceeds once Postgres appears).
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { redactUrl } from '../../worker/runtime/services.ts';
import { waitFor } from '../support/fixtures.ts';
import { patient } from '../support/patience.ts';
import { freePort } from '../support/ports.ts';
import { faultSuite, logged, startTcpProxy } from './harness.ts';

const suite = faultSuite();

describe('Postgres faults', () => {
  it.each([
    ['waiting for the session row lock', 'row'],
    ['waiting on its ledger insert, with its archive and summary written', 'ledger'],
  ] as const)(
    'pg_terminate_backend in apply, %s: rolled back, retried, applied once',
    async (_, where) => {
      const s = await suite.scenario();
      const imported = await s.seed('s1');
      const w = s.startWorker();
      const eventId = randomUUID();
      const hold = where === 'row' ? await s.holdSessionRow('s1') : await s.holdLedgerKey(eventId, 's1');
      const { jobId } = await s.addJob('s1', { eventId });
      const waiting = await s.lockWaits(w);
      expect(waiting).toHaveLength(1);

      expect(await s.terminate(waiting)).toBe(1);
      // Either the attempt fails with the connection error and BullMQ retries it in this worker, or,
      // with postgres.js 3.4.9, the whole process dies: the driver writes the transaction's ROLLBACK
      // to the closed socket from a setImmediate, and the TypeError it throws there escapes every
      // try/catch (a known postgres.js bug, open upstream with no release fixing it). Only that crash
      // is tolerated; a replacement worker (the orchestrator's restart) then recovers the stalled job.
      const outcome = await waitFor(async () => {
        if (w.exitCode !== null || w.signalCode !== null) return 'crashed' as const;
        return w.logs().some((l) => l.msg === 'job failed') ? ('retried' as const) : undefined;
      }, 20_000);
      if (outcome === 'retried') {
        const failed = w.logs().find((l) => l.msg === 'job failed');
        expect(String(failed?.err)).toMatch(/terminating connection|CONNECTION_CLOSED/);
      } else {
        const { stderr } = await w.done;
        expect(stderr).toContain("TypeError: Cannot read properties of null (reading 'write')");
        expect(stderr).toMatch(/at Immediate\.nextWrite \(\S+\/postgres\/src\/connection\.js:\d+:\d+\)/);
      }
      expect(await s.ledger('s1')).toEqual([]);
      expect(await s.expectInvariants()).toMatchObject({
        liveOriginals: imported,
        archivedOriginals: 0,
        liveSummaries: 0,
      });

      await hold.release('rollback');
      if (outcome === 'crashed') s.startWorker();
      const result = await s.completed(jobId);
      expect(result.status).toBe('applied');
      if (outcome === 'retried') expect(result.attemptsMade).toBe(2);
      expect((await s.rowsFor(eventId)).map((r) => r.status)).toEqual(['applied']);
      expect(s.llmCalls()).toBe(2);
      const report = await s.expectInvariants();
      expect(report.liveSummaries).toBe(1);
      console.info(`pg_terminate_backend in apply (${where}): the worker ${outcome}`);
      // Up to two worker start-ups, a stalled-job recovery and a summary: past the default 30 s on a
      // loaded two-core machine (as when the whole suite runs both queue backends side by side).
    },
    patient(60_000),
  );

  it('Postgres down at start-up: the worker says so, keeps retrying, and proceeds once it appears', async () => {
    const s = await suite.scenario();
    await s.seed('s1');
    const port = await freePort();
    const real = new URL(s.tdb.url);
    const away = new URL(s.tdb.url);
    away.port = String(port);
    // At debug level every attempt is logged; only a change of state at error or info level.
    const w = s.startWorker({ databaseUrl: away.toString(), env: { COMPACTOR_LOG_LEVEL: 'debug' } });

    const retries = await waitFor(async () => {
      const lines = w.logs().filter((l) => l.msg.endsWith('is not reachable; retrying'));
      return lines.length >= 3 ? lines : undefined;
    }, 20_000);
    expect(retries[0]?.msg).toBe(`Postgres at ${redactUrl(w.databaseUrl)} is not reachable; retrying`);
    expect(retries[0]?.err).toBe(
      `connection refused at ${away.hostname}:${port}: is PostgreSQL running there? (DATABASE_URL)`,
    );
    expect(w.exitCode).toBeNull();
    const { jobId, eventId } = await s.addJob('s1');

    const proxy = await startTcpProxy(port, { host: real.hostname, port: Number(real.port || 5432) });
    s.onCleanup(() => proxy.close());
    await logged(w, 'worker started');
    // Told once when unreachable and once when reachable, whatever the attempts in between.
    const unreachable = w.logs().filter((l) => l.msg.endsWith('is not reachable; retrying'));
    expect(unreachable.filter((l) => l.level >= 50)).toHaveLength(1);
    expect(w.logs().find((l) => l.msg.endsWith(' is reachable'))).toMatchObject({ state: 'restored' });
    expect(w.rawStderr()).toEqual([]);
    expect(await s.completed(jobId)).toMatchObject({ status: 'applied' });
    expect((await s.rowsFor(eventId)).map((r) => r.status)).toEqual(['applied']);
    await s.expectInvariants();
  });
});
