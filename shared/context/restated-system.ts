/**
 * Which archived system text a rendered context restates (shared/context/render.ts for the
 * Messages API, shared/formats/openai-chat/context.ts for Chat Completions). Pure, no I/O.
 *
 * A compaction that archives a system message restates its text, so no instruction is lost
 * (docs/architecture.md, "Pinned messages stay"). Agents often send one system prompt several times
 * (crewAI starts every task with it again), so a history can archive many identical copies. Each
 * distinct text is restated once, at its first appearance, and not at all when a leading system
 * message still in the history holds the same text. That is safe: the same instruction said again
 * adds nothing a model can follow that it did not already have, and the order of the distinct
 * instructions is kept. Nothing is deleted: every copy stays in the archive, and a restore puts each
 * back where it was.
 */

/**
 * The archived system texts to restate: blank ones and exact repeats left out (first appearance
 * kept, order kept), and those identical to one of `leading` (the text of the leading system
 * messages still in the history) left out.
 * @param archived the text of the archived system messages, in seq order.
 */
export function restatedSystem(archived: readonly string[], leading: readonly string[] = []): string[] {
  const seen = new Set(leading);
  const out: string[] = [];
  for (const text of archived) {
    if (text.trim() === '' || seen.has(text)) continue;
    seen.add(text);
    out.push(text);
  }
  return out;
}
