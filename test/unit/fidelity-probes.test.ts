/** The probe files parse and name probed sessions; the grader and the precision rules grade known texts. */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseTranscript } from '../../shared/contract/transcript.ts';
import { emptyCheckpoint } from '../../shared/summary/checkpoint.ts';
import { loadProbeFiles } from '../fidelity/probe-files.ts';
import {
  aloneCuts,
  aloneExpect,
  failedCompleted,
  gradeExpect,
  isFailedResult,
  isMetaText,
  PROBE_TYPES,
  PROBED_MIN_MESSAGES,
  pointCut,
  probeFileSchema,
  staleBlockers,
} from '../fidelity/probes.ts';
import { CORPUS_DIR } from '../support/fixtures.ts';

describe('probe files', () => {
  it('are read from the directory given, and an absent directory holds none', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'probes-'));
    try {
      const [first] = await loadProbeFiles();
      if (!first) throw new Error('the tuning set has probe files');
      await writeFile(path.join(dir, `${first.session}.json`), JSON.stringify(first));
      expect((await loadProbeFiles(dir)).map((f) => f.session)).toEqual([first.session]);
      expect(await loadProbeFiles(path.join(dir, 'absent'))).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('parse, name an existing session with more than 40 messages, and use only known probe types', async () => {
    const files = await loadProbeFiles();
    const { readdir } = await import('node:fs/promises');
    const sessions = (await readdir(CORPUS_DIR)).filter((f) => f.endsWith('.jsonl'));
    const probed: string[] = [];
    for (const f of sessions) {
      const messages = parseTranscript(await readFile(path.join(CORPUS_DIR, f)), f);
      if (messages.length >= PROBED_MIN_MESSAGES) probed.push(f.replace(/\.jsonl$/, ''));
    }
    expect(files.map((f) => f.session).sort()).toEqual(probed.sort());
    for (const file of files) {
      for (const probe of file.probes) expect(PROBE_TYPES).toContain(probe.type);
      // Every point of every session has probes.
      expect(new Set(file.probes.map((p) => p.at))).toEqual(new Set(['third', 'twoThirds', 'end']));
    }
  });

  it('refuses an unknown probe type, a missing answer and untrimmed needles', () => {
    const probe = {
      type: 'nextStep',
      at: 'end',
      question: 'What next?',
      expect: { allOf: ['pytest'] },
      why: 'seq 3',
    };
    expect(probeFileSchema.safeParse({ session: 's', probes: [probe] }).success).toBe(true);
    expect(probeFileSchema.safeParse({ session: 's', probes: [{ ...probe, type: 'mood' }] }).success).toBe(
      false,
    );
    expect(probeFileSchema.safeParse({ session: 's', probes: [{ ...probe, expect: {} }] }).success).toBe(
      false,
    );
    expect(
      probeFileSchema.safeParse({ session: 's', probes: [{ ...probe, expect: { allOf: [' a  b'] } }] })
        .success,
    ).toBe(false);
  });

  it('hold every alone answer in the messages up to its cut, inside the point it belongs to', async () => {
    let checked = 0;
    for (const file of await loadProbeFiles()) {
      const name = `${file.session}.jsonl`;
      const messages = parseTranscript(await readFile(path.join(CORPUS_DIR, name)), name);
      for (const probe of file.probes) {
        if (!probe.alone) continue;
        const answer = probe.alone.expect;
        for (const leavingThrough of aloneCuts(probe)) {
          // The cut lies before the point's end: what left is part of the point's prefix.
          expect(leavingThrough).toBeLessThan(pointCut(messages, probe.at));
          if (answer === null) continue;
          const upToCut = messages
            .filter((m) => m.seq <= leavingThrough)
            .map((m) => m.content)
            .join('\n');
          expect(gradeExpect({ ...answer, noneOf: [] }, upToCut), `${file.session} ${probe.question}`).toBe(
            true,
          );
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(0);
  });
});

describe('aloneExpect', () => {
  const probe = {
    type: 'nextStep' as const,
    at: 'end' as const,
    question: 'Where does the work stand?',
    expect: { allOf: ['submitted'] },
    why: 'seq 99',
  };

  it('grades the checkpoint alone on the answer as of the cut, or not at all when it never leaves', () => {
    expect(aloneExpect(probe)).toEqual({ allOf: ['submitted'] });
    const atCut = { leavingThrough: 90, expect: { allOf: ['git diff > patch.txt'] }, why: 'seq 88-90' };
    expect(aloneExpect({ ...probe, alone: atCut })).toEqual({ allOf: ['git diff > patch.txt'] });
    expect(aloneExpect({ ...probe, alone: { ...atCut, expect: null } })).toBeNull();
  });
});

describe('gradeExpect', () => {
  const text = "Ran:   PYTEST tests/test_schema.py\nAttributeError: 'NoneType' object has no attribute";
  it('passes on allOf and anyOf needles, case and whitespace aside', () => {
    expect(gradeExpect({ allOf: ['pytest tests/test_schema.py'] }, text)).toBe(true);
    expect(gradeExpect({ anyOf: [['nope', "attributeerror: 'nonetype'"]] }, text)).toBe(true);
  });
  it('fails on a missing needle, an anyOf group with none, and a noneOf needle present', () => {
    expect(gradeExpect({ allOf: ['pytest tests/test_fields.py'] }, text)).toBe(false);
    expect(gradeExpect({ allOf: ['pytest'], anyOf: [['tox', 'nox']] }, text)).toBe(false);
    expect(gradeExpect({ noneOf: ["attributeerror: 'nonetype'"] }, text)).toBe(false);
    expect(gradeExpect({ noneOf: ['typeerror'] }, text)).toBe(true);
  });
  it('checks noneOf against the summary text only when one is given', () => {
    expect(
      gradeExpect({ allOf: ['pytest'], noneOf: ['attributeerror'] }, text, 'Completed: ran pytest'),
    ).toBe(true);
  });
});

describe('precision rules', () => {
  const msg = (
    seq: number,
    role: string,
    kind: string,
    content: string,
    toolCallId: string | null = null,
  ) => ({
    seq,
    role,
    kind,
    content,
    toolCallId,
  });
  it('finds stale blockers by the noneOf of unresolvedError probes', () => {
    const checkpoint = {
      ...emptyCheckpoint(),
      blockers: ['E999 IndentationError: unexpected indent', 'disk full'].map((text) => ({
        text,
        seq: null,
      })),
    };
    const probes = [
      {
        type: 'unresolvedError' as const,
        at: 'end' as const,
        question: 'q?',
        why: 'seq 1',
        expect: { noneOf: ['e999 indentationerror'] },
      },
    ];
    expect(staleBlockers(checkpoint, probes)).toEqual(['E999 IndentationError: unexpected indent']);
  });
  it('finds failed calls listed as completed, unless a later run of the same call succeeded', () => {
    const call = (command: string) => JSON.stringify({ name: 'bash', arguments: { command } });
    const messages = [
      msg(0, 'assistant', 'tool_call', call('python -m pytest tests/test_x.py'), 'a'),
      msg(1, 'tool', 'tool_result', '<returncode>1</returncode>\n<output>1 failed</output>', 'a'),
      msg(2, 'assistant', 'tool_call', call('make build-everything'), 'b'),
      msg(3, 'tool', 'tool_result', '<returncode>2</returncode>', 'b'),
      msg(4, 'assistant', 'tool_call', call('make build-everything'), 'c'),
      msg(5, 'tool', 'tool_result', '<returncode>0</returncode>', 'c'),
    ];
    const checkpoint = {
      ...emptyCheckpoint(),
      completed: ['ran: python -m pytest tests/test_x.py', 'ran: make build-everything'].map((text) => ({
        text,
        seq: null,
      })),
    };
    expect(failedCompleted(checkpoint, messages)).toEqual(['ran: python -m pytest tests/test_x.py']);
  });
  it('tells failed results and meta messages', () => {
    expect(isFailedResult('Traceback (most recent call last):\n  File "x"')).toBe(true);
    expect(isFailedResult('Command `ls` executed with exit code 0.')).toBe(false);
    expect(isFailedResult('[error] <tool_use_error>No task found</tool_use_error>')).toBe(true);
    expect(isMetaText('<command-name>/plugin</command-name>')).toBe(true);
    expect(isMetaText('/status')).toBe(true);
    expect(isMetaText('[Request interrupted by user for tool use]')).toBe(true);
    expect(isMetaText('<ide_opened_file>x</ide_opened_file>')).toBe(true);
    expect(isMetaText('<ide_opened_file>x</ide_opened_file>\ncommit!')).toBe(false);
    expect(isMetaText('- name the command /session-share:publish')).toBe(false);
  });
  it('cuts a transcript by thirds, never between a call and its result', () => {
    const kinds = ['message', 'tool_call', 'tool_result', 'message', 'tool_call', 'tool_result'].map(
      (kind) => ({ kind }),
    );
    expect(pointCut(kinds, 'third')).toBe(3);
    expect(pointCut(kinds, 'twoThirds')).toBe(4);
    expect(pointCut(kinds, 'end')).toBe(6);
  });
});
