/**
 * Post-processing benchmark (issue 4 figures): how long `processRun` takes for a 100-action session at
 * 1280x800, against the session's wall time (target ≤ 1/50), the extraction rate (target ≥ 20 actions/s),
 * and the recording's size per minute.
 *
 * The session is REAL: an Agent (recording through the recording proxy, as `run()` does by default)
 * drives a page with many screen changes on a real desktop (launchDesktop, Xvnc, default encodings):
 * 100 actions cycling through clicking nav items that swap the whole content panel, typing into a search
 * box that filters a table, scrolling a long list, moving the pointer, toggling a dialog, with a short
 * think time between actions. That takes ~30 s. The 5-minute session is then made by stretching the
 * recording's and the trace's timestamps (same bytes, same 100 actions, same frames to decode and encode;
 * only the gaps between chunks grow): a faithful synthetic recording. `--real-minutes 5` paces the real
 * session to last that long instead (no stretching).
 *
 * Run: npx tsx bench/post-process.ts [--actions 100] [--minutes 5] [--real-minutes M] [--runs 3]
 */
import { cp, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, type AgentOptions } from '../harness/agent/index.ts';
import { launchDesktop } from '../harness/desktop/index.ts';
import { TIME_RECORD_BYTES, parseTimeIndex, writeTimeRecord } from '../recorder/proxy/index.ts';
import { recordingProxyRecorder } from '../recorder/recorder-factory.ts';
import { processRun } from '../recorder/process/index.ts';
import { Replayer } from '../recorder/replay/index.ts';
import { median, ms, table } from './stats.ts';

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
};
const ACTIONS = arg('--actions', 100);
const MINUTES = arg('--minutes', 5);
const REAL_MINUTES = arg('--real-minutes', 0);
const RUNS = arg('--runs', 3);

const NAV = ['Dashboard', 'Orders', 'Customers', 'Products', 'Invoices', 'Reports'];
const PAGE = `<!doctype html><html><head><meta charset="utf-8"><style>
  * { box-sizing: border-box; caret-color: transparent; }
  body { margin: 0; font: 14px/1.45 "DejaVu Sans", sans-serif; color: #1f2933; background: #f5f7fa; }
  header { display: flex; align-items: center; gap: 16px; height: 52px; padding: 0 24px; background: linear-gradient(90deg, #243b53, #486581); color: #fff; }
  header h1 { font-size: 18px; margin: 0; flex: 1; }
  header input { width: 280px; padding: 6px 10px; border-radius: 4px; border: 0; font: inherit; }
  nav { position: fixed; top: 52px; bottom: 0; width: 200px; background: #fff; border-right: 1px solid #d9e2ec; padding: 16px 0; }
  nav a { display: block; padding: 10px 24px; color: #334e68; text-decoration: none; }
  nav a.active { background: #e6f6ff; border-left: 4px solid #2186eb; font-weight: bold; }
  main { margin-left: 200px; padding: 20px 24px; height: calc(100vh - 52px); overflow-y: auto; }
  .hero { height: 160px; border-radius: 8px; color: #fff; padding: 20px; font-size: 28px; }
  table { width: 100%; border-collapse: collapse; background: #fff; margin-top: 16px; }
  th, td { text-align: left; padding: 8px 12px; border-bottom: 1px solid #eef2f7; }
  .badge { padding: 2px 8px; border-radius: 10px; font-size: 12px; }
  dialog { border: 0; border-radius: 10px; box-shadow: 0 10px 40px rgba(0,0,0,.35); padding: 32px; font-size: 20px; }
</style></head><body>
<header><h1>Acme Orders</h1><input id="q" placeholder="Search customers…"><button id="dlg">Help</button></header>
<nav>${NAV.map((n, i) => `<a href="#" data-i="${i}"${i === 0 ? ' class="active"' : ''}>${n}</a>`).join('')}</nav>
<main><div class="hero" id="hero"></div><table><thead><tr><th>#</th><th>Customer</th><th>Date</th><th>Status</th><th>Total</th></tr></thead><tbody id="rows"></tbody></table></main>
<dialog id="d"><p>Keyboard shortcuts: / search, g o orders.</p><p>Press Help again to close.</p></dialog>
<script>
  const names = ['Ada Lovelace','Alan Turing','Grace Hopper','Linus Torvalds','Margaret Hamilton','Dennis Ritchie','Barbara Liskov','Ken Thompson','Radia Perlman','Donald Knuth','Frances Allen','John McCarthy','Edsger Dijkstra','Katherine Johnson'];
  const hues = [210, 20, 140, 280, 50, 330];
  let page = 0;
  function render() {
    const q = document.getElementById('q').value.toLowerCase();
    const h = hues[page];
    document.getElementById('hero').style.background = 'linear-gradient(120deg, hsl(' + h + ',70%,45%), hsl(' + ((h + 60) % 360) + ',70%,60%))';
    document.getElementById('hero').textContent = ${JSON.stringify(NAV)}[page] + (q ? ' — "' + q + '"' : '');
    let html = '';
    for (let i = 0; i < 80; i++) {
      const n = names[(i * 7 + page * 3) % names.length];
      if (q && !n.toLowerCase().includes(q)) continue;
      html += '<tr><td>' + (10231 + i + page * 100) + '</td><td>' + n + '</td><td>2026-11-' + String(1 + (i % 28)).padStart(2, '0') + '</td><td><span class="badge" style="background:hsl(' + ((h + i * 13) % 360) + ',80%,90%)">' + ['Paid','Pending','Refunded'][(i + page) % 3] + '</span></td><td>$' + ((37.5 * (i + 3 + page)) % 913).toFixed(2) + '</td></tr>';
    }
    document.getElementById('rows').innerHTML = html;
  }
  document.querySelectorAll('nav a').forEach((a) => a.onclick = (e) => { e.preventDefault(); document.querySelector('nav a.active').classList.remove('active'); a.classList.add('active'); page = +a.dataset.i; document.querySelector('main').scrollTop = 0; render(); });
  document.getElementById('q').oninput = render;
  document.getElementById('dlg').onclick = () => { const d = document.getElementById('d'); d.open ? d.close() : d.show(); };
  render();
</script></body></html>`;

/** Drives the page: ACTIONS actions cycling through the kinds of change, `thinkMs` between them. */
class DriverAgent extends Agent {
  private step = 0;
  constructor(
    options: AgentOptions,
    private readonly thinkMs: number,
  ) {
    super(options);
  }
  override async act(): Promise<boolean> {
    const s = this.step++;
    if (s > 0) await new Promise((r) => setTimeout(r, this.thinkMs));
    if (s >= ACTIONS - 1) {
      await this.finish();
      return true;
    }
    switch (s % 10) {
      case 0:
      case 5:
        await this.mouseClick({ position: { x: 80, y: 52 + 16 + Math.round(40.3 * ((s / 5) % NAV.length)) + 20 } });
        break;
      case 1:
        await this.mouseClick({ position: { x: 1050, y: 26 } }); // the search box
        break;
      case 2:
        await this.typeText(['ada', 'gr', 'lin', 'ken'][((s / 10) % 4) | 0]!);
        break;
      case 3:
        await this.pressKeys('ctrl+a');
        break;
      case 4:
        await this.mouseScroll({ position: { x: 700, y: 500 }, direction: 'down', repeat: 5 });
        break;
      case 6:
        await this.mouseMove({ x: 300 + (s % 7) * 100, y: 300 });
        break;
      case 7:
        await this.mouseClick({ position: { x: 1230, y: 26 } }); // Help: open the dialog
        break;
      case 8:
        await this.mouseClick({ position: { x: 1230, y: 26 } }); // and close it
        break;
      default:
        await this.mouseScroll({ position: { x: 700, y: 500 }, direction: 'up', repeat: 5 });
    }
    return false;
  }
}

async function dirBytes(dir: string): Promise<number> {
  let n = 0;
  for (const f of await readdir(dir)) if (f.endsWith('.rfb.bin')) n += (await stat(join(dir, f))).size;
  return n;
}

/** Copy `src` run to `dst` with every timestamp t (recording and trace) moved to t0 + (t - t0) * k. */
async function stretchRun(src: string, dst: string, k: number): Promise<void> {
  await cp(src, dst, { recursive: true });
  await rm(join(dst, 'action_screenshots'), { recursive: true, force: true });
  await rm(join(dst, 'action_screenshots.json'), { force: true });
  const entries = JSON.parse(await readFile(join(src, 'execution.json'), 'utf8')) as Array<{ started_at: number; ended_at: number; duration_ms: number }>;
  const t0 = entries[0]!.started_at - 1000;
  const s = (t: number) => t0 + (t - t0) * k;
  const rec = join(dst, 'recording');
  for (const f of await readdir(rec)) {
    if (!f.endsWith('.time.bin')) continue;
    const b = await readFile(join(rec, f));
    for (const [i, r] of parseTimeIndex(b).records.entries()) writeTimeRecord(b, i * TIME_RECORD_BYTES, s(r.t), r.end);
    await writeFile(join(rec, f), b);
  }
  const manifest = JSON.parse(await readFile(join(rec, 'recording.json'), 'utf8')) as { connections: Array<{ opened_at: number; closed_at: number | null }> };
  for (const c of manifest.connections) {
    c.opened_at = s(c.opened_at);
    if (c.closed_at !== null) c.closed_at = s(c.closed_at);
  }
  await writeFile(join(rec, 'recording.json'), JSON.stringify(manifest));
  for (const e of entries) {
    e.started_at = s(e.started_at);
    e.ended_at = s(e.ended_at);
    e.duration_ms = e.ended_at - e.started_at;
  }
  await writeFile(join(dst, 'execution.json'), JSON.stringify(entries));
}

async function main(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'vncua-bench-post-'));
  const server = createServer((_q, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(PAGE);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const desktop = await launchDesktop({ url, size: '1280x800' });
  try {
    await new Promise((r) => setTimeout(r, 1500)); // the page loads
    const real = join(root, 'real');
    const thinkMs = REAL_MINUTES > 0 ? (REAL_MINUTES * 60_000) / ACTIONS : 250;
    const t = performance.now();
    const result = await new DriverAgent({ outputDir: real, vncUrl: desktop.vncUrl, cdpUrl: desktop.cdpUrl, recorder: recordingProxyRecorder }, thinkMs).run({
      maxSteps: ACTIONS + 5,
    });
    const sessionMs = performance.now() - t;
    if (result.status !== 'finished') throw new Error(`the driving run ended ${result.status}: ${result.error?.message}`);
    const entries = JSON.parse(await readFile(join(real, 'execution.json'), 'utf8')) as unknown[];
    const bytes = await dirBytes(join(real, 'recording'));
    const perMinute = bytes / (sessionMs / 60_000);

    // Decode-only cost: every update of the recording through the shared decoders.
    const decodeMs: number[] = [];
    let updates = 0;
    for (let i = 0; i < RUNS; i++) {
      const r = await Replayer.open(join(real, 'recording'));
      const t1 = performance.now();
      let q = -Infinity;
      updates = 0;
      for (;;) {
        const u = await r.nextUpdateAfter(q);
        if (u === null) break;
        updates++;
        q = u;
      }
      await r.frameAt(q);
      decodeMs.push(performance.now() - t1);
    }

    const targetMs = MINUTES * 60_000;
    const stretched = join(root, 'stretched');
    const rows: string[][] = [];
    const measure = async (label: string, dir: string, wallMs: number, overwrite: boolean) => {
      const times: number[] = [];
      let images = 0;
      let warnings = 0;
      for (let i = 0; i < RUNS; i++) {
        const r = await processRun(dir, { overwrite: overwrite || i > 0 });
        times.push(r.durationMs);
        images = r.images;
        warnings = r.warnings.length;
      }
      const m = median(times);
      rows.push([
        label,
        `${(wallMs / 1000).toFixed(1)} s`,
        String(entries.length),
        String(images),
        ms(m),
        `1/${Math.round(wallMs / m)}`,
        (entries.length / (m / 1000)).toFixed(1),
        String(warnings),
      ]);
    };
    await measure('real session (as recorded)', real, sessionMs, false);
    if (REAL_MINUTES === 0) {
      await stretchRun(real, stretched, targetMs / sessionMs);
      await measure(`stretched to ${MINUTES} min (same bytes)`, stretched, targetMs, true);
    }

    const out: string[] = [];
    out.push(
      `A real ${ACTIONS}-action session at 1280x800 (Xvnc, default encodings CopyRect/Hextile/Raw, recorded through the recording proxy), ${(sessionMs / 1000).toFixed(1)} s of wall time; processRun (one process: replay through the shared decoders, PNGs encoded by sharp on the thread pool while decoding goes on, JSON, HTML report), median of ${RUNS}.`,
    );
    out.push('');
    out.push(table(['session', 'wall time', 'actions', 'images', 'processRun', 'share of wall time', 'actions/s', 'warnings'], rows));
    out.push('');
    out.push(`- Targets: ≤ 1/50 of the session's wall time for a ${MINUTES}-minute, ${ACTIONS}-action session; ≥ 20 actions/s.`);
    out.push(`- Decoding alone (every one of the ${updates} updates, no PNG): ${ms(median(decodeMs))} median.`);
    out.push(
      `- Recording size: ${(bytes / 1e6).toFixed(2)} MB for ${(sessionMs / 1000).toFixed(1)} s of busy session = **${(perMinute / 1e6).toFixed(2)} MB per minute** at 1280x800 (both directions, ${ACTIONS} actions, the screen changing after almost every action; an idle screen sends nothing).`,
    );
    if (REAL_MINUTES === 0)
      out.push(
        `- The ${MINUTES}-minute row replays the same recorded bytes with timestamps stretched ×${(targetMs / sessionMs).toFixed(1)} (a faithful synthetic recording: same updates and actions, longer gaps).`,
      );
    process.stdout.write(`${out.join('\n')}\n`);
  } finally {
    await desktop.close();
    await new Promise<void>((r) => server.close(() => r()));
    await rm(root, { recursive: true, force: true });
  }
}

await main();
