/**
 * A progress bar for long work (import, demo, sweep), drawn by cli-progress on a terminal only:
 * when the stream is not a TTY (a pipe, a file, CI) nothing is drawn and no escape code is written,
 * and lines printed through {@link Progress.print} come out unchanged.
 */
import cliProgress from 'cli-progress';

/** The part of a stream the bar needs; `process.stderr` is one. */
export interface TerminalStream {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

/** Progress of one piece of work at a time, and the lines printed while it runs. */
export interface Progress {
  /** Whether a bar can be drawn at all (the stream is a terminal). */
  readonly drawing: boolean;
  /** Starts (or restarts) the bar: `label`, 0 of `total` `unit`s. */
  start(label: string, total: number, unit: string): void;
  /** Moves the bar by `by` (default 1). */
  increment(by?: number): void;
  /** Sets the bar to `value` of `total` (total unchanged when omitted; raised to `value` if below it). */
  update(value: number, total?: number): void;
  /** Writes `line` and a newline to `to` without tearing the bar, which is redrawn below it. */
  print(to: TerminalStream, line: string): void;
  /** Removes the bar; safe to call when none is shown. */
  stop(): void;
}

/**
 * A bar drawn on `stream` when it is a terminal (`stream.isTTY`), else one that draws nothing.
 * Ctrl-C still ends the process at once: the bar installs no signal handler, and it neither hides
 * the cursor nor turns off line wrapping, so an interrupted bar leaves the terminal as it was.
 */
export function createProgress(stream: TerminalStream): Progress {
  if (stream.isTTY !== true) {
    return {
      drawing: false,
      start() {},
      increment() {},
      update() {},
      print(to, line) {
        to.write(`${line}\n`);
      },
      stop() {},
    };
  }
  let bars: cliProgress.MultiBar | null = null;
  let bar: cliProgress.SingleBar | null = null;
  let barTotal = 0;
  const stop = () => {
    bars?.stop();
    bars = null;
    bar = null;
  };
  return {
    drawing: true,
    start(label, total, unit) {
      stop();
      bars = new cliProgress.MultiBar({
        stream: stream as NodeJS.WritableStream,
        format: `${label} [{bar}] {value}/{total} ${unit} | {duration_formatted}`,
        barsize: Math.max(10, Math.min(40, (stream.columns ?? 80) - label.length - 40)),
        clearOnComplete: true,
        // The line is rewritten on every tick: a line printed above it must not leave it blank.
        forceRedraw: true,
        linewrap: true,
        hideCursor: false,
        gracefulExit: false,
        // Redraws come from the timer only, never from inside an update, so they cost nothing extra.
        fps: 10,
      });
      bar = bars.create(total, 0);
      barTotal = total;
    },
    increment(by = 1) {
      bar?.increment(by);
    },
    update(value, total) {
      // A total counted before the work began can fall short of it; the bar then grows, never overflows.
      const next = Math.max(total ?? barTotal, value);
      if (next !== barTotal) {
        barTotal = next;
        bar?.setTotal(next);
      }
      bar?.update(value);
    },
    print(to, line) {
      if (!bars) {
        to.write(`${line}\n`);
        return;
      }
      // Clear the bar's line, write above it, redraw it below.
      stream.write('\r\x1b[2K');
      to.write(`${line}\n`);
      bars.update();
    },
    stop,
  };
}
