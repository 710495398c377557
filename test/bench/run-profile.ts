/**
 * A CPU profile of one benchmark run's measured phase only (node:inspector's Profiler, in this
 * process), without the seeding and set-up around it that `node --cpu-prof` records too, and a
 * reading of such a profile: the self time of each function and of each source file, in ms per
 * job. `npm run bench -- --parts 2 --levels 128 --profile DIR` writes one profile per part-2 run;
 * `tsx test/bench/run-profile.ts FILE [JOBS]` prints the reading (JOBS defaults to the count the
 * file's name carries).
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { positiveInteger } from './report.ts';

/** A profile being recorded: `stop` ends it and writes it (see {@link startRunProfile}). */
export interface RunProfile {
  stop(): Promise<void>;
}

/**
 * Starts recording this process's CPU profile (sampling every `intervalUs` µs, default 500; the
 * profiler costs some CPU of its own, so read a profiled run's numbers as a profile, not a
 * measurement). `stop()` writes it as `<dir>/<name>.cpuprofile` (Chrome DevTools' format).
 */
export async function startRunProfile(dir: string, name: string, intervalUs = 500): Promise<RunProfile> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: intervalUs });
  await session.post('Profiler.start');
  return {
    async stop() {
      const { profile } = await session.post('Profiler.stop');
      session.disconnect();
      await mkdir(dir, { recursive: true });
      await writeFile(join(dir, `${name}.cpuprofile`), JSON.stringify(profile));
    },
  };
}

/** A node of a `.cpuprofile`, as much of it as {@link selfTimes} reads. */
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

/** The parts of a `.cpuprofile` {@link selfTimes} reads. */
export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Self time, ms, by function (`name file:line`) and by source file (the last two path segments). */
export function selfTimes(profile: CpuProfile): {
  byFunction: Map<string, number>;
  byFile: Map<string, number>;
} {
  const msById = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    msById.set(id, (msById.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  });
  const byFunction = new Map<string, number>();
  const byFile = new Map<string, number>();
  const add = (map: Map<string, number>, key: string, ms: number) => map.set(key, (map.get(key) ?? 0) + ms);
  for (const node of profile.nodes) {
    const ms = msById.get(node.id) ?? 0;
    if (ms === 0) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    const file = url ? url.split('/').slice(-2).join('/') : '(native)';
    // A regular expression's own frame names its source, which can run to kilobytes.
    const name = (functionName || '(anonymous)').slice(0, 100);
    add(byFunction, `${name} ${file}:${lineNumber + 1}`, ms);
    add(byFile, functionName.startsWith('RegExp:') ? '(regular expressions)' : file, ms);
  }
  return { byFunction, byFile };
}

/** The `top` largest entries of `times`, as lines of ms per job (divided by `jobs`). */
export function topLines(times: Map<string, number>, jobs: number, top: number): string[] {
  return [...times]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([key, ms]) => `${(ms / jobs).toFixed(3).padStart(8)}  ${key}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  // The jobs of the run: given, else read from the name bench.ts gives the file.
  const [file, jobsText = /-(\d+)jobs\.cpuprofile$/.exec(process.argv[2] ?? '')?.[1] ?? '1'] =
    process.argv.slice(2);
  if (!file) {
    console.error('usage: tsx test/bench/run-profile.ts FILE.cpuprofile [JOBS]');
    process.exit(2);
  }
  const jobs = positiveInteger('jobs', jobsText);
  const profile = JSON.parse(await readFile(file, 'utf8')) as CpuProfile;
  const { byFunction, byFile } = selfTimes(profile);
  const total = [...byFile.values()].reduce((a, b) => a + b, 0);
  console.log(`${file}: ${(total / jobs).toFixed(3)} ms a job in all (self time, ms a job)`);
  console.log('\nBy file:');
  for (const line of topLines(byFile, jobs, 30)) console.log(line);
  console.log('\nBy function:');
  for (const line of topLines(byFunction, jobs, 40)) console.log(line);
}
