/** Progress display: the TTY block is redrawn in place (cursor up, clear lines); plain mode prints one line per event. */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { formatDuration, plainProgress, ttyProgress, type ProgressSnapshot } from './progress.ts';

function sink(columns = 120): { stream: Writable & { columns: number }; text(): string } {
  let text = '';
  const stream = Object.assign(
    new Writable({
      write(chunk, _enc, cb) {
        text += String(chunk);
        cb();
      },
    }),
    { columns },
  );
  return { stream, text: () => text };
}

const snap = (done: number): ProgressSnapshot => ({
  total: 10,
  skipped: 2,
  done,
  successes: done - 1,
  infraErrors: 1,
  infraCodes: { PAGE_ERR_HTTP_STATUS: 1 },
  startedAt: Date.now() - 60_000,
  etaMs: 90_000,
  workers: [
    { worker: 0, state: 'running agent', job: 'click-1@1280x800', attempt: 2, since: Date.now() - 5000 },
    { worker: 1, state: 'idle', since: Date.now() },
  ],
});

describe('progress', () => {
  it('on a TTY, redraws the same block in place: done/total, successes, ETA, one line per worker', () => {
    const out = sink();
    const p = ttyProgress(out.stream, 60_000);
    p.listener({ type: 'start' }, snap(3));
    const first = out.text();
    expect(first).toContain('5/10 done (2 skipped), 2 succeeded, 1 infra error (PAGE_ERR_HTTP_STATUS)');
    expect(first).toContain('ETA 1m30s');
    expect(first).toContain('worker 1: running agent click-1@1280x800 (attempt 2) 5s');
    expect(first).toContain('worker 2: idle');
    expect(first).not.toContain('\x1b[3F');
    p.listener({ type: 'done', job: 'click-1@1280x800', status: 'finished', success: true, attempts: 2, durationMs: 4000, dir: '/x' }, snap(4));
    p.stop();
    const second = out.text().slice(first.length);
    // Back up over the 3 lines drawn before, then the finished run scrolls above the new block.
    expect(second.startsWith('\x1b[3F')).toBe(true);
    expect(second).toContain('ok   click-1@1280x800 (finished, 4s)');
    expect(second).toContain('6/10 done');
  });

  it('cuts lines to the terminal width, and takes 100 columns when the terminal reports none (0)', () => {
    for (const [columns, width] of [
      [40, 39],
      [0, 99],
    ] as const) {
      const out = sink(columns);
      const p = ttyProgress(out.stream, 60_000);
      p.listener({ type: 'start' }, { ...snap(3), workers: [{ worker: 0, state: 'running agent', job: `${'x'.repeat(150)}@1280x800`, since: Date.now() }] });
      p.stop();
      const lines = out
        .text()
        .split('\n')
        .map((l) => l.replace(new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*[A-Za-z]`, 'g'), ''))
        .filter(Boolean);
      expect(lines.some((l) => l.startsWith('5/10 done (2 skipped), 2 succeeded'))).toBe(true);
      expect(Math.max(...lines.map((l) => l.length))).toBe(width);
    }
  });

  it('otherwise, prints plain lines', () => {
    const out = sink();
    const p = plainProgress(out.stream);
    p.listener({ type: 'start' }, snap(0));
    p.listener({ type: 'retry', job: 'a@1280x800', attempt: 1, error: { code: 'DESKTOP_ERR_START_FAILED', message: 'Xvnc died\nmore' } }, snap(0));
    const page404 = { code: 'PAGE_ERR_HTTP_STATUS', message: 'the task page http://127.0.0.1:1/a answered HTTP 404; the server does not serve this path' };
    p.listener({ type: 'done', job: 'a@1280x800', status: 'infra_error', success: null, attempts: 3, durationMs: 1000, dir: '/x', error: page404 }, snap(1));
    p.listener(
      { type: 'done', job: 'b@1280x800', status: 'max_steps', success: false, attempts: 1, durationMs: 2000, dir: '/y' },
      { ...snap(2), infraCodes: { PAGE_ERR_HTTP_STATUS: 2, PAGE_ERR_BLANK: 1 }, infraErrors: 3 },
    );
    p.listener({ type: 'end', cancelled: false }, snap(1));
    p.listener({ type: 'end', cancelled: false, configError: { code: 'MODEL_ERR_AUTH', message: 'bad key', job: 'c@1280x800' } }, { ...snap(1), infraErrors: 0 });
    expect(out.text().split('\n').filter(Boolean)).toEqual([
      'eval: 10 runs, 2 already done, 2 workers',
      'eval: a@1280x800: infra failure on attempt 1 (DESKTOP_ERR_START_FAILED: Xvnc died); retrying',
      // The infra error's code and its facts (up to the hint after "; ").
      'eval: [3/10] a@1280x800: infra_error (PAGE_ERR_HTTP_STATUS: the task page http://127.0.0.1:1/a answered HTTP 404), success unknown, 1s, 3 attempts',
      'eval: [4/10] b@1280x800: max_steps, no success, 2s',
      'eval: 3/10 done (2 skipped), 0 succeeded, 1 infra error (PAGE_ERR_HTTP_STATUS), elapsed 1m00s, ETA 1m30s',
      'eval: stopped by MODEL_ERR_AUTH (c@1280x800); 3/10 done (2 skipped), 0 succeeded, elapsed 1m00s, ETA 1m30s',
    ]);
    expect([formatDuration(null), formatDuration(59_400), formatDuration(3_600_000 * 2 + 60_000)]).toEqual(['?', '59s', '2h01m']);
  });
});
