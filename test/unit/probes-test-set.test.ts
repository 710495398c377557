/**
 * The test set's probe files (`test/fidelity/probes-test/`) parse, ask about a held-out session
 * (`corpus/heldout/`) long enough to be probed, cite only seqs inside it, and read their `alone`
 * answers at cuts before their point.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseTranscript } from '../../shared/contract/transcript.ts';
import { HELDOUT_DIR, loadProbeFiles, PROBES_TEST_DIR } from '../fidelity/probe-files.ts';
import { aloneCuts, POINTS, PROBED_MIN_MESSAGES, pointCut } from '../fidelity/probes.ts';

/** The seqs a `why` text cites: every number after "seq" or "seqs", ranges and lists included. */
function citedSeqs(why: string): number[] {
  const out: number[] = [];
  for (const match of why.matchAll(/\bseqs? ([\d\s,/–-]+(?:and \d+)?)/g)) {
    for (const n of (match[1] ?? '').matchAll(/\d+/g)) out.push(Number(n[0]));
  }
  return out;
}

describe('the test set of probes', () => {
  it('has a probe file for every held-out session and no other', async () => {
    const sessions = (await readdir(HELDOUT_DIR))
      .filter((f) => f.endsWith('.jsonl'))
      .map((f) => f.slice(0, -6));
    const files = await loadProbeFiles(PROBES_TEST_DIR);
    expect(files.map((f) => f.session).sort()).toEqual(sessions.sort());
    expect(files.length).toBeGreaterThan(0);
  });

  it('asks about sessions of more than 40 messages, at every point, citing seqs inside the session', async () => {
    for (const file of await loadProbeFiles(PROBES_TEST_DIR)) {
      const source = path.join(HELDOUT_DIR, `${file.session}.jsonl`);
      const messages = parseTranscript(await readFile(source), source);
      expect(messages.length, file.session).toBeGreaterThanOrEqual(PROBED_MIN_MESSAGES);
      expect(new Set(file.probes.map((p) => p.at)), file.session).toEqual(new Set(POINTS));
      for (const probe of file.probes) {
        const where = `${file.session}: ${probe.at} ${probe.type} "${probe.question}"`;
        const cited = [...citedSeqs(probe.why), ...(probe.alone ? citedSeqs(probe.alone.why) : [])];
        expect(cited.length, `${where} cites no seq`).toBeGreaterThan(0);
        for (const seq of cited) expect(seq, where).toBeLessThan(messages.length);
        const cut = pointCut(messages, probe.at);
        for (const through of aloneCuts(probe)) expect(through, where).toBeLessThan(cut);
      }
    }
  });
});
