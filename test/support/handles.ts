/**
 * What a piece of code left open that would keep a process alive: the connections, servers and
 * timers it opened (through async_hooks, so only its own, not those of the test around it) that are
 * still open and referenced once it has returned. `runCli` fails a command on these; tests of
 * modules that open sockets use it directly.
 */
import { AsyncLocalStorage, createHook } from 'node:async_hooks';

/** Async resource types that keep a process alive while open and referenced. */
const HANDLES = new Set(['TCPWRAP', 'TCPSERVERWRAP', 'PIPEWRAP', 'PIPESERVERWRAP', 'Timeout', 'Immediate']);

/**
 * An async resource as `init` hands it over: the handle itself, or, when an http.Agent hands a
 * pooled keep-alive socket to a new request, Node's `ReusedHandle` wrapper ({ type, handle }) around
 * the socket's TCP handle (the agent gives the handle a new async id, with the wrapper as its
 * resource).
 */
interface Resource {
  hasRef?: () => boolean;
  handle?: { hasRef?: () => boolean };
}

interface Opened {
  type: string;
  resource: Resource;
}

/** The resources each tracked run opened and has not closed yet, by async id. */
const running = new AsyncLocalStorage<Map<number, Opened>>();
const owners = new Map<number, Map<number, Opened>>();
let runs = 0;
const hook = createHook({
  init(id, type, _trigger, resource) {
    const opened = running.getStore();
    if (!opened || !HANDLES.has(type)) return;
    opened.set(id, { type, resource: resource as Resource });
    owners.set(id, opened);
  },
  destroy(id) {
    owners.get(id)?.delete(id);
    owners.delete(id);
  },
});

/**
 * Whether a resource keeps the process alive: its own `hasRef`, else that of the handle a
 * `ReusedHandle` wraps (a pooled socket back in its agent's free list is unref'd there), else yes.
 */
function isReferenced(resource: Resource): boolean {
  const owner = typeof resource.hasRef === 'function' ? resource : resource.handle;
  return owner?.hasRef?.() ?? true;
}

/** The still-open resources of `opened` that would keep a process alive, as `type ×n` words. */
function keepingAlive(opened: Map<number, Opened>): string {
  const counts = new Map<string, number>();
  for (const { type, resource } of opened.values())
    if (isReferenced(resource)) counts.set(type, (counts.get(type) ?? 0) + 1);
  return [...counts].map(([type, n]) => `${type} ×${n}`).join(', ');
}

/** What {@link trackHandles} resolves with. */
export interface Tracked<T> {
  /** What `fn` resolved with. */
  value: T;
  /** The handles `fn` opened that are still open and referenced, as `TCPWRAP ×1, Timeout ×2`; '' for none. */
  left: string;
}

/**
 * Runs `fn` and resolves with its value and the handles it opened that still keep the process
 * alive, after up to `graceMs` (default two seconds) for closing ones to finish. Handles opened
 * outside `fn`'s async context (by the test, before or meanwhile) do not count.
 * @throws whatever `fn` throws.
 */
export async function trackHandles<T>(fn: () => Promise<T>, graceMs = 2_000): Promise<Tracked<T>> {
  const opened = new Map<number, Opened>();
  if (runs++ === 0) hook.enable();
  try {
    const value = await running.run(opened, fn);
    const deadline = Date.now() + graceMs;
    let left = keepingAlive(opened);
    while (left && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      left = keepingAlive(opened);
    }
    return { value, left };
  } finally {
    for (const id of opened.keys()) owners.delete(id);
    if (--runs === 0) hook.disable();
  }
}
