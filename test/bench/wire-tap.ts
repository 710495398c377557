/**
 * A tap on the Postgres wire protocol, for benchmarks that count what a client sends: sockets that
 * read every frontend message a client writes (postgres.js through its `socket` option, node-postgres
 * through its `stream` option) and count, per client label and per statement text, the statements
 * executed, the round trips and the transactions.
 *
 * - A statement is an `Execute` of the extended protocol (its text from the `Parse` that named it,
 *   a prepared statement's from the connection's first `Parse` of it) or a simple `Query`.
 * - A round trip is a flight of writes on one connection after the server answered: the client
 *   wrote, then had to read before it wrote again. A pipelined batch is one; a statement postgres.js
 *   describes first (parameters, not yet prepared) is two. It is charged to the flight's first
 *   statement.
 * - A transaction is a `begin`, or a statement outside one (autocommit).
 *
 * Nothing here changes what is sent: the sockets pass every byte on as written.
 */
import net from 'node:net';

/** What one statement text (or purpose) cost, summed over a run. */
export interface WireCount {
  statements: number;
  roundTrips: number;
  transactions: number;
}

/** Counts per client label, then per statement text. */
export type WireCounts = Map<string, Map<string, WireCount>>;

/** One connection's parser state. */
interface Conn {
  buffer: Buffer;
  /** The untyped start-up message is still to come. */
  startup: boolean;
  /** The server wrote since this connection last did: the next write starts a round trip. */
  answered: boolean;
  /** A round trip began and no statement has been charged for it yet. */
  tripOpen: boolean;
  /** Inside `begin` … `commit`/`rollback`. */
  inTransaction: boolean;
  /** The open transaction's first statement, which names its `begin` and `commit` in the counts. */
  first: string | null;
  /** The `begin` (its text and whether it opened a round trip), counted once `first` is known. */
  begin: { text: string; trip: boolean } | null;
  /** Statement name → text (the unnamed statement is ''). */
  statements: Map<string, string>;
  /** The statement the last Bind named: the next Execute runs it. */
  bound: string;
}

/** A wire tap: socket factories for both drivers, and the counts so far. */
export class WireTap {
  readonly counts: WireCounts = new Map();

  /**
   * postgres.js's `socket` option: a connected TCP socket to `host`:`port` whose writes are counted
   * under `label`.
   */
  postgresJsSocket(label: string, host: string, port: number): () => net.Socket {
    return () => this.tapped(label, net.connect(port, host));
  }

  /** node-postgres's `stream` option: an unconnected socket (pg connects it) counted under `label`. */
  pgStream(label: string): () => net.Socket {
    return () => this.tapped(label, new net.Socket());
  }

  /** Forgets every count (the connections keep their prepared statements' texts). */
  reset(): void {
    this.counts.clear();
  }

  private tapped(label: string, socket: net.Socket): net.Socket {
    const conn: Conn = {
      buffer: Buffer.alloc(0),
      startup: true,
      answered: true,
      tripOpen: false,
      inTransaction: false,
      first: null,
      begin: null,
      statements: new Map(),
      bound: '',
    };
    socket.on('data', () => {
      conn.answered = true;
    });
    // Node puts `write` back when the socket connects, so the tap sits one level down, where the
    // stream hands its chunks to the socket.
    const sent = (chunk: unknown) => {
      if (conn.answered) {
        conn.answered = false;
        conn.tripOpen = true;
      }
      if (chunk instanceof Uint8Array) this.read(label, conn, Buffer.from(chunk));
    };
    const inner = socket as unknown as {
      _write(chunk: unknown, encoding: string, cb: () => void): void;
      _writev(chunks: { chunk: unknown }[], cb: () => void): void;
    };
    const write = inner._write.bind(socket);
    const writev = inner._writev.bind(socket);
    inner._write = (chunk, encoding, cb) => {
      sent(chunk);
      write(chunk, encoding, cb);
    };
    inner._writev = (chunks, cb) => {
      for (const { chunk } of chunks) sent(chunk);
      writev(chunks, cb);
    };
    return socket;
  }

  /** Parses the complete frontend messages buffered on `conn`. */
  private read(label: string, conn: Conn, chunk: Buffer): void {
    conn.buffer = conn.buffer.length ? Buffer.concat([conn.buffer, chunk]) : chunk;
    for (;;) {
      const { buffer } = conn;
      if (conn.startup) {
        if (buffer.length < 4) return;
        const length = buffer.readInt32BE(0);
        if (buffer.length < length) return;
        // An SSLRequest or GSSENCRequest precedes the real start-up message.
        const code = buffer.readInt32BE(4);
        if (code !== 80877103 && code !== 80877104) conn.startup = false;
        conn.buffer = buffer.subarray(length);
        continue;
      }
      if (buffer.length < 5) return;
      const length = buffer.readInt32BE(1);
      if (buffer.length < 1 + length) return;
      this.message(label, conn, String.fromCharCode(buffer[0] ?? 0), buffer.subarray(5, 1 + length));
      conn.buffer = buffer.subarray(1 + length);
    }
  }

  private message(label: string, conn: Conn, type: string, body: Buffer): void {
    if (type === 'P') {
      const name = cString(body, 0);
      conn.statements.set(name.text, cString(body, name.end).text);
    } else if (type === 'B') {
      const portal = cString(body, 0);
      conn.bound = cString(body, portal.end).text;
    } else if (type === 'E') {
      this.statement(label, conn, conn.statements.get(conn.bound) ?? '?');
    } else if (type === 'Q') {
      this.statement(label, conn, cString(body, 0).text);
    }
  }

  private statement(label: string, conn: Conn, text: string): void {
    const normalized = text.replace(/\s+/g, ' ').trim();
    const verb = normalized.slice(0, 8).toLowerCase();
    const trip = conn.tripOpen;
    conn.tripOpen = false;
    if (verb.startsWith('begin') || verb.startsWith('start tr')) {
      conn.inTransaction = true;
      conn.first = null;
      conn.begin = { text: normalized, trip };
      return;
    }
    if (verb.startsWith('commit') || verb.startsWith('rollback') || verb.startsWith('end')) {
      this.add(label, `${normalized} ‹${conn.first ?? ''}›`, trip, false);
      conn.inTransaction = false;
      return;
    }
    if (conn.inTransaction && conn.first === null) {
      conn.first = normalized;
      const { begin } = conn;
      if (begin) this.add(label, `${begin.text} ‹${normalized}›`, begin.trip, true);
      conn.begin = null;
    }
    this.add(label, normalized, trip, !conn.inTransaction);
  }

  private add(label: string, key: string, trip: boolean, transaction: boolean): void {
    const count = countOf(this.counts, label, key);
    count.statements += 1;
    if (trip) count.roundTrips += 1;
    if (transaction) count.transactions += 1;
  }
}

function countOf(counts: WireCounts, label: string, text: string): WireCount {
  let byText = counts.get(label);
  if (!byText) {
    byText = new Map();
    counts.set(label, byText);
  }
  let count = byText.get(text);
  if (!count) {
    count = { statements: 0, roundTrips: 0, transactions: 0 };
    byText.set(text, count);
  }
  return count;
}

/** The NUL-terminated string at `offset` of `body`, and the offset after its NUL. */
function cString(body: Buffer, offset: number): { text: string; end: number } {
  const end = body.indexOf(0, offset);
  const stop = end < 0 ? body.length : end;
  return { text: body.toString('utf8', offset, stop), end: stop + 1 };
}
