/**
 * Everything a Mastra agent needs from compactor, made in one call: the processor (with its
 * database and producer, opened from the environment unless given) and, with `recall`, the recall
 * tools of compactor's MCP server (through `@mastra/mcp`'s `MCPClient`), and one `close` for what it
 * opened.
 */
import { DEFAULT_DATABASE_URL } from '../../../shared/protocol/queue-backend.ts';
import { createProducer, type Producer } from '../../index.ts';
import { type Database, type Db, openDatabase } from '../../postgres/db.ts';
import { CompactorProcessor, type CompactorProcessorOptions } from './processor.ts';
import { type McpTool, type RecallToolName, recallTools } from './recall.ts';

/** Options of {@link createMastraCompactor}. */
export interface MastraCompactorOptions extends Omit<CompactorProcessorOptions, 'db' | 'producer'> {
  /** The database of the sessions; default: `openDatabase(DATABASE_URL)`, closed by `close`. */
  db?: Db;
  /** Enqueues the runs' events; default: `createProducer({ db })` (the workers' queue), closed by `close`. */
  producer?: Producer;
  /**
   * Where `compactor api` serves (`apiUrl`, its base URL: the MCP server is at `/v1/mcp`) and a key
   * of the tenant with scope `context:read`: gives {@link MastraCompactor.tools}. Absent: no tools.
   */
  recall?: { apiUrl: string | URL; apiKey: string };
}

/** What {@link createMastraCompactor} made. */
export interface MastraCompactor {
  /** Give it to the agent as an input and an output processor. */
  processor: CompactorProcessor;
  /** `recall_search` and `recall_read` (empty without `recall`): spread them into the agent's tools. */
  tools: Partial<Record<RecallToolName, McpTool>>;
  /** Closes what this call opened (the MCP client, the producer and the database it made), once. */
  close(): Promise<void>;
}

/**
 * Makes the processor and the recall tools of a Mastra agent:
 *
 * ```ts
 * const compactor = await createMastraCompactor({ tenantId: 'acme', recall: { apiUrl, apiKey } });
 * const agent = new Agent({
 *   ...,
 *   tools: { ...tools, ...compactor.tools },
 *   inputProcessors: [compactor.processor],
 *   outputProcessors: [compactor.processor],
 * });
 * ```
 *
 * `DATABASE_URL` (default `postgres://postgres@127.0.0.1:5432/compactor`) names the database when
 * `db` is not given; the producer enqueues where workers started with the same environment listen.
 * @throws {Error} when `recall` is given and `@mastra/mcp` is not installed, or the MCP server
 *   refuses the key or cannot be reached (nothing stays open then).
 */
export async function createMastraCompactor(options: MastraCompactorOptions): Promise<MastraCompactor> {
  const { db: givenDb, producer: givenProducer, recall, ...rest } = options;
  const opened: Array<() => Promise<unknown>> = [];
  const close = async () => {
    for (const step of opened.splice(0).reverse()) await step();
  };
  try {
    let database: Database | undefined;
    if (!givenDb) {
      database = openDatabase(process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL);
      opened.push(() => (database as Database).close());
    }
    const db = givenDb ?? (database as Database).db;
    const producer = givenProducer ?? createProducer({ db });
    if (!givenProducer) opened.push(() => producer.close());
    const processor = new CompactorProcessor({ ...rest, db, producer });
    let tools: MastraCompactor['tools'] = {};
    if (recall) {
      const { MCPClient } = await import('@mastra/mcp');
      const mcp = new MCPClient({
        id: `compactor-recall-${crypto.randomUUID()}`,
        servers: {
          compactor: {
            url: new URL('/v1/mcp', recall.apiUrl),
            requestInit: { headers: { authorization: `Bearer ${recall.apiKey}` } },
          },
        },
      });
      opened.push(() => mcp.disconnect());
      tools = recallTools((await mcp.listToolsets()).compactor ?? {}, processor);
    }
    return { processor, tools, close };
  } catch (error) {
    await close();
    throw error;
  }
}
