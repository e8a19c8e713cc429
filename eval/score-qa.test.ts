import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempOutputDir } from '../harness/test-helpers/files.ts';
import { qaLine, readQaRows } from './score-qa.ts';

describe('QA rows of the scores', () => {
  it('one row per run with a qa-report.json (kinds with findings only); runs without one, or with another file, are left out', async () => {
    const root = await tempOutputDir('vncua-score-qa-');
    try {
      const run = (dir: string) => ({ agent: 'explorer', resolution: '1280x720', task_id: dir.split('/').pop()!, repeat: 1, dir });
      await mkdir(join(root.dir, 'explorer/1280x720/app'), { recursive: true });
      await mkdir(join(root.dir, 'explorer/1280x720/odd'), { recursive: true });
      await writeFile(
        join(root.dir, 'explorer/1280x720/app/qa-report.json'),
        JSON.stringify({ startUrl: 'http://a.test/', totals: { findings: 3, byKind: { console_error: 2, http_error: 1, crash: 0 }, coveragePct: 62.5, states: 4, steps: 20 } }),
      );
      await writeFile(join(root.dir, 'explorer/1280x720/odd/qa-report.json'), '{"totals": "?"}');
      const rows = await readQaRows(root.dir, [run('explorer/1280x720/app'), run('explorer/1280x720/odd'), run('explorer/1280x720/none')]);
      expect(rows).toEqual([
        {
          agent: 'explorer',
          resolution: '1280x720',
          task_id: 'app',
          repeat: 1,
          url: 'http://a.test/',
          findings: 3,
          by_kind: { console_error: 2, http_error: 1 },
          coverage_pct: 62.5,
          states: 4,
          steps: 20,
          link: 'explorer/1280x720/app/qa-report.html',
        },
      ]);
      expect(qaLine(rows[0]!)).toBe('3 findings (console_error 2, http_error 1), coverage 62.5%, 4 states');
    } finally {
      await root.remove();
    }
  });
});
