/**
 * Recall's probes for `npm run fidelity`: what an agent would search its archive for after a
 * compaction, taken from the messages that left: every working-set file path, and every shell
 * command it ran (a tool call's `command` or `cmd` argument, or the first line of a fenced `bash` /
 * `sh` block in its text), each with the seqs of the leaving messages that hold it verbatim. A
 * probe is answered when recall's search for its text ranks one of those seqs in its top five.
 */
import type { Db } from '../../producer/postgres/db.ts';
import { searchRecall } from '../../producer/recall.ts';
import type { Message } from '../../shared/contract/message.ts';
import { MAX_RECALL_QUERY_CHARS } from '../../shared/recall/schemas.ts';
import { isRecord, parseJson } from '../../shared/text/text.ts';
import { extractWorkingSet } from '../../shared/working-set/working-set.ts';

/** One thing to look for, and where it is. */
export interface RecallProbe {
  kind: 'path' | 'command';
  text: string;
  /** Seqs of the leaving messages holding `text` verbatim. */
  seqs: number[];
}

/** How many probes were answered in the top five, by kind. */
export interface RecallScore {
  paths: { found: number; asked: number };
  commands: { found: number; asked: number };
  /** Probes not answered, for the report. */
  missed: RecallProbe[];
}

const FENCED = /```(?:bash|sh|shell|console)?\n([^\n]+)/g;

/** `text` cut to at most `max` characters at a space, as a person would quote the start of a long command. */
function wordsWithin(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.lastIndexOf(' ', max);
  return cut > 0 ? text.slice(0, cut) : text.slice(0, max);
}

/** The commands a message ran: its tool call's command argument, its fenced shell blocks' first lines. */
function commandsOf(m: Message): string[] {
  const out: string[] = [];
  if (m.kind === 'tool_call') {
    const call = parseJson(m.content);
    const args = isRecord(call) && isRecord(call.arguments) ? call.arguments : call;
    for (const key of ['command', 'cmd']) {
      const value = isRecord(args) ? args[key] : undefined;
      if (typeof value === 'string') out.push(value.split('\n')[0] ?? '');
    }
  } else if (m.role === 'assistant') {
    for (const match of m.content.matchAll(FENCED)) out.push(match[1] ?? '');
  }
  return out.map((c) => wordsWithin(c.trim(), 200)).filter((c) => c.length >= 4);
}

/** The probes of the messages that left, each text once. */
export function recallProbes(leaving: readonly Message[]): RecallProbe[] {
  const where = (text: string) => leaving.filter((m) => m.content.includes(text)).map((m) => m.seq);
  const probes = new Map<string, RecallProbe>();
  for (const path of extractWorkingSet([...leaving]))
    probes.set(`path:${path}`, { kind: 'path', text: path, seqs: [] });
  for (const m of leaving) {
    for (const command of commandsOf(m))
      probes.set(`command:${command}`, { kind: 'command', text: command, seqs: [] });
  }
  return [...probes.values()]
    .map((p) => ({ ...p, text: p.text.slice(0, MAX_RECALL_QUERY_CHARS), seqs: where(p.text) }))
    .filter((p) => p.seqs.length > 0);
}

/** Searches the session's archive for every probe and counts those answered in the top five. */
export async function scoreRecall(
  db: Db,
  tenantId: string,
  sessionId: string,
  probes: readonly RecallProbe[],
): Promise<RecallScore> {
  const score: RecallScore = { paths: { found: 0, asked: 0 }, commands: { found: 0, asked: 0 }, missed: [] };
  for (const probe of probes) {
    const { hits } = await searchRecall(db, {
      tenantId,
      sessionId,
      query: probe.text,
      scope: 'session',
      limit: 5,
    });
    const tally = probe.kind === 'path' ? score.paths : score.commands;
    tally.asked += 1;
    if (hits.some((h) => probe.seqs.includes(h.seq))) tally.found += 1;
    else score.missed.push(probe);
  }
  return score;
}
