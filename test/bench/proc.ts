/**
 * CPU time from /proc (Linux), for benchmarks that say where the time goes. Times are in ms, read in
 * the kernel's 10 ms ticks (USER_HZ 100).
 */
import { readdir, readFile } from 'node:fs/promises';
import type postgres from 'postgres';

const TICK_MS = 10;

/** User + system CPU time of one process so far, ms; 0 when it is gone. */
export async function processCpuMs(pid: number | string): Promise<number> {
  return (await processStat(pid)).ms;
}

/** A process's command name and CPU ms so far (empty name and 0 when it is gone). */
async function processStat(pid: number | string): Promise<{ comm: string; ms: number }> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  if (!stat) return { comm: '', ms: 0 };
  const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
  // Fields after the command: state is the first; utime and stime are the 12th and 13th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { comm, ms: (Number(fields[11]) + Number(fields[12])) * TICK_MS };
}

/**
 * CPU ms so far of the Postgres backends connected to database `database` (`pg_stat_activity`, read
 * through `admin`). Cumulative per backend: one that connected since an earlier reading counts from
 * its start, one that left since no longer counts.
 */
export async function databaseCpuMs(admin: postgres.Sql, database: string): Promise<number> {
  const backends = await admin<{ pid: number }[]>`
    select pid from pg_stat_activity where datname = ${database}`;
  let ms = 0;
  for (const { pid } of backends) ms += await processCpuMs(pid);
  return ms;
}

/** CPU ms so far of every redis-server process on the machine. */
export async function redisServerCpuMs(): Promise<number> {
  let ms = 0;
  for (const pid of await readdir('/proc').catch(() => [])) {
    if (!/^\d+$/.test(pid)) continue;
    const s = await processStat(pid);
    if (s.comm.startsWith('redis-server')) ms += s.ms;
  }
  return ms;
}

/**
 * The machine's CPU time so far, summed over its cores, ms: `busy` (everything but idle and I/O
 * wait) and `total`. Two readings give the share of the machine that was busy between them.
 */
export async function machineCpuMs(): Promise<{ busy: number; total: number }> {
  const line = (await readFile('/proc/stat', 'utf8')).split('\n')[0] ?? '';
  const [, ...ticks] = line.trim().split(/\s+/).map(Number);
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = ticks;
  const busy = user + nice + system + irq + softirq + steal;
  return { busy: busy * TICK_MS, total: (busy + idle + iowait) * TICK_MS };
}

/** A process and its descendants, now: their pids, CPU ms so far (summed) and resident memory (kB, summed). */
export async function processTree(pid: number): Promise<{ pids: number[]; cpuMs: number; rssKb: number }> {
  const pids: number[] = [];
  const visit = async (p: number): Promise<void> => {
    pids.push(p);
    const children = await readFile(`/proc/${p}/task/${p}/children`, 'utf8').catch(() => '');
    for (const child of children.split(' ').filter(Boolean)) await visit(Number(child));
  };
  await visit(pid);
  let cpuMs = 0;
  let rssKb = 0;
  for (const p of pids) {
    cpuMs += await processCpuMs(p);
    const status = await readFile(`/proc/${p}/status`, 'utf8').catch(() => '');
    rssKb += Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0);
  }
  return { pids, cpuMs, rssKb };
}
