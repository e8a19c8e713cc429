/**
 * `vncua export ROOT --format jsonl` over a results tree built from fixture runs (synthetic recordings
 * of recorder/process/test-helpers/runs.ts): one run processed beforehand (images copied), one only
 * recorded (images rendered), a model agent's run with meta and a middle click, a uitask run, a run
 * without recording, a damaged one and an infra error. Every line is checked against the published
 * JSON Schema with ajv; ROOT is hashed before and after.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isVncuaError } from '../harness/errors.ts';
import type { ExportLine } from '../harness/trace/export-line.ts';
import { processRun } from '../recorder/process/run.ts';
import { writeVncuaRun } from '../recorder/process/test-helpers/runs.ts';
import { H, RES, W, writeExportTree } from './test-fixtures/export-runs.ts';
import { exportRoot, modelOf } from './export.ts';

const SCHEMA = fileURLToPath(new URL('../schemas/export-line.schema.json', import.meta.url));
const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false });

/** Width and height from a PNG's IHDR. */
async function pngSize(file: string): Promise<{ width: number; height: number }> {
  const b = await readFile(file);
  expect(b.subarray(1, 4).toString('latin1')).toBe('PNG');
  return { width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
}

/** Every file under `dir` with its size, mtime and content hash: what "nothing modified" compares. */
async function snapshot(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (d: string) => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) {
        out[`${relative(dir, p)}/`] = 'dir';
        await walk(p);
      } else {
        const s = await stat(p);
        out[relative(dir, p)] = `${s.size} ${s.mtimeMs} ${createHash('sha1')
          .update(await readFile(p))
          .digest('hex')}`;
      }
    }
  };
  await walk(dir);
  return out;
}

async function lines(file: string): Promise<ExportLine[]> {
  return (await readFile(file, 'utf8'))
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as ExportLine);
}

let base: string;
let root: string;
const runDir = (agent: string, id: string) => join(root, agent, RES, id);

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'vncua-export-'));
  root = join(base, 'runs');
  await writeExportTree(root);
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

describe('vncua export --format jsonl', () => {
  let before: Record<string, string>;
  let out: string;
  let all: ExportLine[];
  let result: Awaited<ReturnType<typeof exportRoot>>;
  beforeAll(async () => {
    before = await snapshot(root);
    out = join(base, 'export-all');
    result = await exportRoot({ root, out });
    all = await lines(join(out, 'steps.jsonl'));
  });

  it('one line per step of every readable run, each valid against schemas/export-line.schema.json (ajv)', async () => {
    const validate = ajv.compile({ ...(JSON.parse(await readFile(SCHEMA, 'utf8')) as object), $id: undefined });
    for (const l of all) expect(validate(l) ? [] : validate.errors, `${l.run_id} #${l.step_index}`).toEqual([]);
    expect(all).toHaveLength(5 * 4);
    expect([...new Set(all.map((l) => l.run_id))]).toEqual([
      `chat/${RES}/click-2`,
      `replay/${RES}/click-1`,
      `replay/${RES}/norec-1`,
      `replay/${RES}/type-1`,
      `uitask/${RES}/web-1`,
    ]);
    expect(result.lines).toBe(20);
  });

  it('the damaged run and the infra error are skipped with their reasons, in export.json', async () => {
    expect(result.skipped.map((s) => [s.run_id, s.code])).toEqual([
      [`replay/${RES}/bad-1`, 'TRACE_ERR_INVALID'],
      [`replay/${RES}/infra-1`, 'DESKTOP_ERR_START_FAILED'],
    ]);
    const manifest = JSON.parse(await readFile(join(out, 'export.json'), 'utf8'));
    expect(manifest.skipped).toHaveLength(2);
    expect(manifest.lines).toBe(20);
    expect(manifest.runs.map((r: { screenshots: string | null }) => r.screenshots)).toEqual(['rendered', 'process', null, 'rendered', 'rendered']);
  });

  it('task, step, the action in our, the TypeScript call and uitask shapes, verdicts', () => {
    const click = all.find((l) => l.run_id.endsWith('click-1') && l.step_index === 0)!;
    expect(click.task).toEqual({ id: 'click-1', goal: 'Do click-1', group: 'click', url: 'pages/click-1.html' });
    expect([click.agent, click.resolution, click.repeat, click.step_count]).toEqual(['replay', `${W}x${H}`, 1, 4]);
    expect(click.params).toEqual({ position: { x: 10, y: 10 }, button: 'left', click_type: 'single' });
    expect(click.call).toEqual({ method: 'mouseClick', args: [{ position: { x: 10, y: 10 }, button: 'left', clickType: 'single' }] });
    expect(click.uitask).toEqual({ action: 'mouse_click', params: { action: { button: 'left', click_type: 'single', position: { x: 10, y: 10 } } }, task_marked_complete: true });
    expect(click.verdict).toMatchObject({ task_marked_complete: true, first_success: true, error: null });
    expect(click.verdict.success_check?.phase).toBe('immediate');
    expect(click.run_verdict).toMatchObject({ status: 'finished', success: true, success_index: 0, finish_index: 3, proper_stop: true, steps: 4 });
    expect([click.started_at, click.ended_at, click.duration_ms]).toEqual([1_763_000_000_100, 1_763_000_000_105, 5]);
    const wait = all.find((l) => l.run_id.endsWith('click-1') && l.action === 'wait')!;
    expect(wait.call).toEqual({ method: 'wait', args: [0.5] });
    expect(wait.uitask?.params).toEqual({ duration: 0.5 });
    const typed = all.find((l) => l.run_id.endsWith('click-1') && l.action === 'type_text')!;
    expect(typed.call).toEqual({ method: 'typeText', args: ['ab'] });
    expect(typed.model).toBeNull();
    expect(typed.meta).toBeNull();
  });

  it("a model agent's messages, reasoning, calls and tokens; an entry uitask cannot express has uitask null with the reason", () => {
    const [a, b] = all.filter((l) => l.run_id.startsWith('chat/'));
    expect(a!.model).toEqual({
      messages: ['I click the button.'],
      reasoning: ['The button is top left.'],
      calls: [{ latency_ms: 812.5, usage: { prompt_tokens: 1000, completion_tokens: 20, total_tokens: 1020 }, model: 'qwen' }],
      tokens: { input: 1000, output: 20, total: 1020 },
      latency_ms: 812.5,
      cost_usd: null,
    });
    expect(a!.uitask).toBeNull();
    expect(a!.uitask_reason).toMatch(/^params\.button: uitask's MouseButton has only left and right/);
    expect(a!.call.args[0]).toMatchObject({ button: 'middle' });
    expect(b!.model).toMatchObject({ messages: ['Now type.'], tokens: { input: 7, output: 3, total: 10 }, latency_ms: 100 });
    expect(modelOf({ request_bytes: [5] })).toBeNull();
  });

  it("a step's cost_usd sums its calls' when every call was priced; tokens prefer the calls' normalized counts (Anthropic's cache tokens included)", () => {
    const anthropicUsage = { input_tokens: 10, cache_read_input_tokens: 900, cache_creation_input_tokens: 90, output_tokens: 5 };
    const priced = modelOf({
      model_calls: [
        { latency_ms: 1, usage: anthropicUsage, tokens: { input: 1000, output: 5, cached_input: 900, cache_write: 90 }, cost_usd: 0.0006525 },
        { latency_ms: 2, usage: { prompt_tokens: 100, completion_tokens: 1 }, tokens: { input: 100, output: 1 }, cost_usd: 0.1 + 0.2 },
      ],
    });
    expect(priced).toMatchObject({ tokens: { input: 1100, output: 6, total: 1106 }, latency_ms: 3, cost_usd: 0.3006525 });
    const partly = modelOf({ model_calls: [{ tokens: { input: 1, output: 1 }, cost_usd: 0.5 }, { tokens: { input: 1, output: 1 } }] });
    expect(partly).toMatchObject({ tokens: { input: 2, output: 2, total: 4 }, cost_usd: null });
    expect(modelOf({ model_text: 'hi' })).toMatchObject({ calls: [], tokens: null, cost_usd: null });
  });

  it('screenshots: PNG files beside the JSONL at the recording size, before and after differ where the action changed the screen', async () => {
    for (const l of all.filter((x) => x.screenshot_source !== null)) {
      for (const p of [l.screenshot_before, l.screenshot_after]) {
        expect(p).toMatch(/^images\/.+\/\d{4}_(before|after)\.png$/);
        expect(await pngSize(join(out, p!))).toEqual({ width: W, height: H });
      }
      expect([l.width, l.height, l.screenshot_reason]).toEqual([W, H, null]);
    }
    for (const id of ['click-1', 'type-1']) {
      const click = all.find((l) => l.run_id.endsWith(`/${id}`) && l.action === 'mouse_click')!;
      const [b, a] = await Promise.all([readFile(join(out, click.screenshot_before!)), readFile(join(out, click.screenshot_after!))]);
      expect(b.equals(a), id).toBe(false);
    }
  });

  it("a processed run's images are copies of vncua process's; a rendered run's equal what vncua process renders", async () => {
    const copied = all.filter((l) => l.run_id.endsWith('/click-1'));
    expect(copied.every((l) => l.screenshot_source === 'process')).toBe(true);
    for (const l of copied) {
      const own = join(runDir('replay', 'click-1'), 'action_screenshots', `${String(l.step_index).padStart(4, '0')}_before.png`);
      expect((await readFile(join(out, l.screenshot_before!))).equals(await readFile(own))).toBe(true);
    }
    // Render type-1 the ordinary way, in a copy elsewhere, and compare.
    const ref = join(base, 'ref-type-1');
    await writeVncuaRun(ref);
    await processRun(ref);
    for (const l of all.filter((x) => x.run_id.endsWith('/type-1'))) {
      expect(l.screenshot_source).toBe('rendered');
      const own = join(ref, 'action_screenshots', `${String(l.step_index).padStart(4, '0')}_after.png`);
      expect((await readFile(join(out, l.screenshot_after!))).equals(await readFile(own)), `#${l.step_index}`).toBe(true);
    }
  });

  it('a run without recording or process output: null screenshots with the reason; uitask runs are aligned like vncua process does', () => {
    for (const l of all.filter((x) => x.run_id.endsWith('/norec-1'))) {
      expect([l.screenshot_before, l.screenshot_after, l.screenshot_source, l.width]).toEqual([null, null, null, null]);
      expect(l.screenshot_reason).toMatch(/no vncua process output .* and no recording/);
      expect(l.run_verdict.status).toBe('partial');
    }
    const u = all.filter((x) => x.run_id.startsWith('uitask/'));
    expect(u.map((l) => l.uitask?.action)).toEqual(['mouse_click', 'type_text', 'wait', 'finish']);
    expect(u[0]!.started_at).toBeNull();
    expect(u[0]!.screenshot_before).not.toBeNull();
    expect(u[0]!.task).toEqual({ id: 'web-1', goal: null, group: 'web', url: null });
  });

  it('nothing under ROOT was modified, and nothing is left but the JSONL, the images and export.json', async () => {
    expect(await snapshot(root)).toEqual(before);
    expect((await readdir(out)).sort()).toEqual(['export.json', 'images', 'steps.jsonl']);
    expect((await readdir(join(out, 'images'))).sort()).toEqual(['chat', 'replay', 'uitask']);
  });
});

describe('filters', () => {
  const ids = async (o: Partial<Parameters<typeof exportRoot>[0]>, name: string) => {
    const out = join(base, name);
    const r = await exportRoot({ root, out, ...o });
    return { runs: [...new Set((await lines(r.paths.jsonl)).map((l) => l.run_id.split('/').at(-1)))], r };
  };

  it('--successful, --agent, --group, --resolution', async () => {
    const s = await ids({ successful: true }, 'f-successful');
    expect(s.runs).toEqual(['click-2', 'click-1', 'norec-1', 'type-1', 'web-1']); // norec-1's partial trace is marked complete at its finish
    expect(s.r.skipped).toHaveLength(2); // unreadable runs are listed: their success is unknown
    expect((await ids({ agents: ['chat', 'uitask'] }, 'f-agent')).runs).toEqual(['click-2', 'web-1']);
    const g = await ids({ groups: ['click'] }, 'f-group');
    expect([g.runs, g.r.filteredOut, g.r.skipped.length]).toEqual([['click-2', 'click-1'], 5, 0]);
    expect((await ids({ resolutions: [`${W}x${H}`], agents: ['replay'], groups: ['type'] }, 'f-res')).runs).toEqual(['type-1']);
  });

  it('jobs 2 (worker processes rendering): the same lines and the same images as in this process', async () => {
    const one = await exportRoot({ root, out: join(base, 'j1'), agents: ['replay', 'uitask'] });
    const two = await exportRoot({ root, out: join(base, 'j2'), agents: ['replay', 'uitask'], jobs: 2 });
    const [a, b] = [await lines(one.paths.jsonl), await lines(two.paths.jsonl)];
    expect(b.map((l) => ({ ...l, run_dir: '' }))).toEqual(a.map((l) => ({ ...l, run_dir: '' })));
    for (const l of a.filter((x) => x.screenshot_source === 'rendered')) {
      expect((await readFile(join(base, 'j2', l.screenshot_after!))).equals(await readFile(join(base, 'j1', l.screenshot_after!)))).toBe(true);
    }
    expect((await readdir(join(base, 'j2', 'images'))).sort()).toEqual(['replay', 'uitask']);
  });

  it('--out FILE.jsonl: images and export.json beside it, paths relative to its directory', async () => {
    const file = join(base, 'f-file', 'train.jsonl');
    await exportRoot({ root, out: file, agents: ['chat'] });
    const ls = await lines(file);
    expect(ls[0]!.screenshot_before).toMatch(/^train\.images\/chat\//);
    expect(existsSync(join(base, 'f-file', ls[0]!.screenshot_before!))).toBe(true);
    expect(existsSync(join(base, 'f-file', 'train.export.json'))).toBe(true);
  });
});

describe('bad input: one coded error, nothing written', () => {
  const code = async (p: Promise<unknown>) => {
    try {
      await p;
    } catch (e) {
      return isVncuaError(e) ? e.code : String(e);
    }
    return 'no error';
  };

  it('no runs, no such ROOT, filters matching nothing', async () => {
    const empty = join(base, 'empty-root');
    await mkdir(empty);
    expect(await code(exportRoot({ root: empty, out: join(base, 'o1') }))).toBe('EXPORT_ERR_NO_RUNS');
    expect(await code(exportRoot({ root: join(base, 'nope'), out: join(base, 'o1') }))).toBe('EXPORT_ERR_NO_RUNS');
    expect(await code(exportRoot({ root, out: join(base, 'o1'), agents: ['nobody'] }))).toBe('EXPORT_ERR_NO_RUNS');
    expect(existsSync(join(base, 'o1'))).toBe(false);
  });

  it('an --out that exists and is not empty, or lies inside ROOT', async () => {
    const full = join(base, 'full');
    await mkdir(full);
    await writeFile(join(full, 'x'), 'x');
    expect(await code(exportRoot({ root, out: full }))).toBe('EXPORT_ERR_OUT_EXISTS');
    expect(await readdir(full)).toEqual(['x']);
    expect(await code(exportRoot({ root, out: join(root, 'export') }))).toBe('EXPORT_ERR_OUT_IN_ROOT');
    expect(existsSync(join(root, 'export'))).toBe(false);
    await writeFile(join(base, 'exists.jsonl'), '');
    expect(await code(exportRoot({ root, out: join(base, 'exists.jsonl') }))).toBe('EXPORT_ERR_OUT_EXISTS');
  });
});
