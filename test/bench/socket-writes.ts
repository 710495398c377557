/**
 * Counts this process's socket writes by the port they go to, while a bench run is measured: on a
 * virtual machine a write to a local server is the dearest system call a job makes (the kernel
 * delivers the bytes and wakes the server's process in the writer's time), so writes per job say
 * how much of a worker's CPU its round trips cost. A write is one call of `Socket.write` (postgres.js
 * batches a connection's statements of one event-loop turn into one; ioredis writes each command
 * or pipeline). Bench instrumentation only: it wraps `net.Socket.prototype.write` and puts it back.
 */
import net from 'node:net';

/** Writes and bytes sent to one remote port. */
export interface PortWrites {
  writes: number;
  bytes: number;
}

/** A count in progress; `stop()` restores `Socket.write` and returns the counts by remote port. */
export interface SocketWriteCount {
  stop(): Map<number, PortWrites>;
}

/**
 * Starts counting every socket write of this process by remote port.
 * @throws {Error} when a count is already running (the wrappers would nest).
 */
export function countSocketWrites(): SocketWriteCount {
  const original = net.Socket.prototype.write;
  if ((original as { counting?: boolean }).counting) throw new Error('countSocketWrites: already counting');
  const counts = new Map<number, PortWrites>();
  const counting = function (this: net.Socket, ...args: Parameters<net.Socket['write']>) {
    const [chunk] = args;
    const port = this.remotePort ?? 0;
    const entry = counts.get(port) ?? { writes: 0, bytes: 0 };
    entry.writes += 1;
    entry.bytes += typeof chunk === 'string' ? Buffer.byteLength(chunk) : (chunk as Uint8Array).byteLength;
    counts.set(port, entry);
    return original.apply(this, args);
  } as net.Socket['write'] & { counting?: boolean };
  counting.counting = true;
  net.Socket.prototype.write = counting;
  return {
    stop() {
      net.Socket.prototype.write = original;
      return counts;
    },
  };
}
