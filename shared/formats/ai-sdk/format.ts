/**
 * The `ai-sdk` session format (format.ts): a row holds one AI SDK provider-level prompt message
 * (`LanguageModelV2Message`, `V3` or `V4` of `@ai-sdk/provider`), its file data in the JSON form of
 * ./encoding.ts, appended as ./row.ts checks it (./message.ts), its facts read by ./facts.ts,
 * rendered as ./context.ts says, cleared as ./clearing.ts says. It reads no transcript: no tool
 * logs the provider-level prompt (what the AI SDK's users log are its UI and model messages, other
 * shapes), and a kind of transcript would need its name in `TRANSCRIPT_FORMATS`
 * (shared/contract/native-transcripts.ts) for `compactor import --format`; a session of this
 * format is created through `createSession` or the HTTP API with its messages. Pure.
 */
import type { FormatVocabulary, SessionFormat } from '../format.ts';
import { aiSdkApiMessageSchema, aiSdkContextSchema } from './api-schema.ts';
import {
  aiSdkRewriteOf,
  aiSdkToolNames,
  clearedAiSdkInputs,
  clearedAiSdkReasoning,
  clearedAiSdkResults,
} from './clearing.ts';
import { renderAiSdkContext } from './context.ts';
import { aiSdkImages, aiSdkMedia } from './media.ts';
import { AI_SDK_PART_TYPES, isAiSdkMessage } from './message.ts';
import { aiSdkRow } from './row.ts';

/**
 * An AI SDK prompt message's words. Its roles are the other formats' too; its content part types
 * `text` and `file` are shared, the others (`tool-call`, `tool-result`, `reasoning`, …, hyphenated)
 * and its `providerOptions` field are its own. `tool` is left out of its roles: a tool message
 * always holds a `tool-result` or `tool-approval-response` part, which shows whose it is (the
 * registry reads a role no further when the parts show a format that lacks it), and a bare
 * `{ role: "tool", content: "…" }` stays what it has always been named, a Chat Completions message.
 */
const VOCABULARY: FormatVocabulary = {
  messages: 'AI SDK provider-level prompt messages (LanguageModelV2/V3/V4Message of @ai-sdk/provider)',
  itemTypes: new Set(),
  roles: new Set(['system', 'user', 'assistant']),
  fields: new Set(['role', 'content', 'providerOptions']),
  partTypes: new Set(AI_SDK_PART_TYPES),
  nullContent: false,
  openItemTypes: false,
  names: {
    item: 'an AI SDK item',
    role: 'an AI SDK role',
    field: 'an AI SDK field',
    part: 'an AI SDK content part',
    nullContent: "an AI SDK message's",
  },
};

/** The `ai-sdk` format, for the registry. */
export const aiSdkFormat: SessionFormat = {
  name: 'ai-sdk',
  vocabulary: VOCABULARY,
  apiSchemas: { message: aiSdkApiMessageSchema, context: aiSdkContextSchema },
  rowOf: aiSdkRow,
  renderContext: (input) => ({ format: 'ai-sdk', ...renderAiSdkContext(input) }),
  summaryTokens: (input) => renderAiSdkContext({ ...input, compactedThroughSeq: null }).tokens,
  transcripts: {},
  toolNames: aiSdkToolNames,
  clearToolResults: clearedAiSdkResults,
  clearToolInputs: clearedAiSdkInputs,
  clearThinking: clearedAiSdkReasoning,
  mediaOf: aiSdkMedia,
  imagesOf: aiSdkImages,
  rewriteOf(meta, content) {
    if (!isAiSdkMessage(content)) throw new Error(`ai-sdk: seq ${meta.seq} holds no AI SDK message`);
    return aiSdkRewriteOf(meta, content);
  },
};
