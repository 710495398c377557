/**
 * A JSON response body written piece by piece: an object whose large arrays (a context's
 * `messages`) are serialized one element at a time as the client reads, so the response never
 * exists as one string or one buffer in the process. The text is what `JSON.stringify(value)`
 * gives (keys in order, `undefined` fields left out).
 */

/**
 * The JSON text of `value`, in pieces: each key of it, and each element of its arrays named in
 * `streamed`, is one piece.
 */
export function* jsonPieces(value: Record<string, unknown>, streamed: readonly string[]): Generator<string> {
  let first = true;
  for (const [key, field] of Object.entries(value)) {
    if (field === undefined) continue;
    const head = `${first ? '{' : ','}${JSON.stringify(key)}:`;
    first = false;
    if (!streamed.includes(key) || !Array.isArray(field)) {
      yield head + JSON.stringify(field);
      continue;
    }
    yield `${head}[`;
    for (const [i, element] of field.entries()) yield (i === 0 ? '' : ',') + JSON.stringify(element ?? null);
    yield ']';
  }
  yield first ? '{}' : '}';
}

/**
 * The longest the pieces of one response are produced without letting the event loop serve other
 * requests, ms. A piece is one message of a context (up to its size cap, a few ms to serialize); a
 * client that reads fast would otherwise have a whole context serialized in one turn of the loop.
 */
export const SLICE_MS = 4;

/**
 * A byte stream of `pieces`, produced as the consumer pulls (one piece per pull), yielding to the
 * event loop (`setImmediate`) once pieces have taken {@link SLICE_MS} since the last yield, so a
 * large response is written in slices between other requests. `onDone` runs once, when the last
 * piece is read, the consumer cancels, or a piece throws.
 */
export function pieceStream(pieces: Iterator<string>, onDone: () => void): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let sliceStart = performance.now();
  let done = false;
  const finish = () => {
    if (done) return;
    done = true;
    onDone();
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (performance.now() - sliceStart >= SLICE_MS) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        sliceStart = performance.now();
      }
      if (done) return; // cancelled while waiting
      try {
        const next = pieces.next();
        if (next.done) {
          controller.close();
          finish();
        } else {
          controller.enqueue(encoder.encode(next.value));
        }
      } catch (error) {
        finish();
        controller.error(error);
      }
    },
    cancel() {
      finish();
    },
  });
}

/** The slice of a buffered body handed to the consumer per pull, bytes. */
const BUFFER_SLICE_BYTES = 256 * 1024;

/**
 * A byte stream of a body already serialized (a context rendered in a worker thread), handed out
 * in views of {@link BUFFER_SLICE_BYTES} (no copy) as the consumer pulls. `onDone` runs once, as in
 * {@link pieceStream}.
 */
export function bufferStream(bytes: Uint8Array, onDone: () => void): ReadableStream<Uint8Array> {
  let offset = 0;
  let done = false;
  const finish = () => {
    if (done) return;
    done = true;
    onDone();
  };
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (offset >= bytes.byteLength) {
        controller.close();
        finish();
        return;
      }
      controller.enqueue(bytes.subarray(offset, offset + BUFFER_SLICE_BYTES));
      offset += BUFFER_SLICE_BYTES;
    },
    cancel() {
      finish();
    },
  });
}
