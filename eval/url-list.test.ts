import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempOutputDir } from '../harness/test-helpers/files.ts';
import { loadTaskFile } from './tasks.ts';
import { looksLikeUrlList, parseUrlList, urlTaskId } from './url-list.ts';

describe('URL lists as task files', () => {
  it('one task a URL: ids from host, port and path (repeats numbered), group the host, comments and blank lines skipped', () => {
    const tasks = parseUrlList('# apps\nhttp://127.0.0.1:8080/index.html\n\n  https://shop.example.com/  \nhttps://shop.example.com/\nhttp://a.test/x y?q=1#f\n', 'apps.txt');
    expect(tasks.map((t) => [t.id, t.group, t.url])).toEqual([
      ['127.0.0.1-8080-index.html', '127.0.0.1:8080', 'http://127.0.0.1:8080/index.html'],
      ['shop.example.com', 'shop.example.com', 'https://shop.example.com/'],
      ['shop.example.com-2', 'shop.example.com', 'https://shop.example.com/'],
      ['a.test-x-20y', 'a.test', 'http://a.test/x%20y?q=1#f'],
    ]);
    expect(tasks[0]).toMatchObject({ goal: 'Explore http://127.0.0.1:8080/index.html', success: { sentinel: expect.any(String) } });
    expect(urlTaskId(new URL('http://h.test/'))).toBe('h.test');
  });

  it('a bad line or an empty list is EVAL_ERR_BAD_TASKS with one issue per bad line', () => {
    let err: unknown;
    try {
      parseUrlList('http://ok.test/\nnot a url\nftp://files.test/\n', 'apps.txt');
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ code: 'EVAL_ERR_BAD_TASKS', details: { issues: [{ index: 1 }, { index: 2 }] } });
    expect((err as Error).message).toMatch(/^apps\.txt: 2 bad lines\./);
    expect(() => parseUrlList('# nothing\n\n', 'apps.txt')).toThrow(/holds no URL/);
  });

  it('loadTaskFile reads a URL list (not JSON, first line a URL); other non-JSON is still "not valid JSON"', async () => {
    expect(looksLikeUrlList('\n# c\nhttps://x.test/')).toBe(true);
    expect(looksLikeUrlList('[{"id": 1}]')).toBe(false);
    const dir = await tempOutputDir('vncua-urls-');
    try {
      await writeFile(join(dir.dir, 'apps.txt'), 'http://127.0.0.1:1/\n');
      expect(await loadTaskFile(join(dir.dir, 'apps.txt'))).toMatchObject({ format: 'urls', tasks: [{ id: '127.0.0.1-1' }] });
      await writeFile(join(dir.dir, 'bad.json'), 'nope');
      await expect(loadTaskFile(join(dir.dir, 'bad.json'))).rejects.toThrow(/not valid JSON/);
    } finally {
      await dir.remove();
    }
  });
});
