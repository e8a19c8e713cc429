/**
 * The step report's inline stylesheet and script. The page has no external resources; its
 * Content-Security-Policy allows only this exact script (by hash), inline styles and images
 * from the report's own directory.
 */
import { createHash } from 'node:crypto';

/** The report's stylesheet. */
export const REPORT_CSS = `
:root{--fg:#1d2330;--muted:#5d6678;--bg:#f4f5f8;--card:#fff;--line:#d9dde6;--accent:#2f6fed;--ok:#1c8c4e;--bad:#c62f2f;--warn:#a86400;--mk:#ff2d55;--mk2:#0a84ff;--mk3:#ffb300}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:var(--fg);background:var(--bg)}
header.top{padding:16px 20px 8px;background:var(--card);border-bottom:1px solid var(--line)}
h1{margin:0 0 6px;font-size:18px}
.task{margin:0 0 8px;font-size:16px;white-space:pre-wrap;overflow-wrap:anywhere}
.task.none{color:var(--muted);font-style:italic}
.outcome{display:flex;flex-wrap:wrap;gap:6px 16px;margin:0 0 6px;padding:0}
.outcome div{display:flex;gap:4px}
.outcome dt{color:var(--muted)}
.outcome dd{margin:0;font-weight:600}
.meta,.keys{margin:4px 0;color:var(--muted)}
.warnings{margin:6px 0;padding:6px 10px 6px 28px;background:#fff6e5;border:1px solid #f0d49a;border-radius:6px;color:var(--warn)}
.warnings code{font-weight:600}
kbd{display:inline-block;padding:0 5px;border:1px solid var(--line);border-bottom-width:2px;border-radius:4px;background:#fafbfd;font:12px/1.6 ui-monospace,"DejaVu Sans Mono",monospace;color:var(--fg)}
nav.index{display:flex;flex-wrap:wrap;gap:3px;margin:8px 0 4px}
nav.index a{padding:0 5px;border:1px solid var(--line);border-radius:4px;font:11px/1.6 ui-monospace,"DejaVu Sans Mono",monospace;color:var(--fg);text-decoration:none;background:#fafbfd}
nav.index a.err{border-color:var(--bad);color:var(--bad)}
nav.index a.done{border-color:var(--ok);color:var(--ok)}
nav.index a.first{background:var(--ok);color:#fff}
nav.index a.human{border-style:dashed}
nav.index a.current{background:var(--accent);border-color:var(--accent);color:#fff}
main{padding:12px 20px 40vh}
.step{margin:0 0 14px;padding:10px 12px;background:var(--card);border:1px solid var(--line);border-left:5px solid var(--line);border-radius:8px;scroll-margin-top:8px;outline:none}
.step.done{border-left-color:var(--ok)}
.step.first-success{border-left-width:9px;background:#f5fbf7}
.step.err{border-left-color:var(--bad)}
.step.human{border-left-color:var(--warn);border-left-style:dashed}
.step.current{box-shadow:0 0 0 3px var(--accent);background:#f7faff}
.head{display:flex;flex-wrap:wrap;align-items:baseline;gap:4px 14px}
.num{font:600 13px ui-monospace,"DejaVu Sans Mono",monospace;color:var(--muted);text-decoration:none}
.action{font:600 15px ui-monospace,"DejaVu Sans Mono",monospace}
.dur,.at,.model{color:var(--muted)}
.flag{padding:0 6px;border-radius:10px;font-size:12px;background:#eef0f4;color:var(--muted)}
.flag.yes{background:#e3f5ea;color:var(--ok);font-weight:600}
.flag.no{background:#f3f4f7}
.flag.first{background:var(--ok);color:#fff;font-weight:600}
.flag.person{background:#fff1d6;color:var(--warn);font-weight:600}
.success{margin:10px 0 0;padding:8px 10px;border:1px solid #b9dfc7;border-radius:6px;background:#eef8f1;scroll-margin-top:8px}
.success .title{margin:0 0 4px;font-weight:600;color:var(--ok)}
.success dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 10px;margin:0 0 6px}
.success dl div{display:contents}
.success dt{color:var(--muted)}
.success dd{margin:0;overflow-wrap:anywhere}
.success code.snippet{white-space:pre-wrap}
.success-shot{max-width:50%}
@media (max-width:800px){.success-shot{max-width:none}}
.error{margin:6px 0 0;padding:4px 8px;background:#fdecec;border:1px solid #f2b8b8;border-radius:6px;color:var(--bad);white-space:pre-wrap;overflow-wrap:anywhere}
.error code{font-weight:600}
.params{margin:6px 0 0;padding:4px 8px;background:#f6f7f9;border-radius:6px;font:12px/1.5 ui-monospace,"DejaVu Sans Mono",monospace;white-space:pre-wrap;overflow-wrap:anywhere}
.typed{display:flex;align-items:flex-start;gap:8px;margin:6px 0 0}
.typed .lbl{color:var(--muted);padding-top:3px}
.typed .text{flex:1;margin:0;padding:4px 8px;border:2px solid var(--accent);border-radius:6px;background:#fff;font:15px/1.5 ui-monospace,"DejaVu Sans Mono",monospace;white-space:pre-wrap;overflow-wrap:anywhere}
.typed .count{color:var(--muted);font-size:12px;padding-top:4px}
.typed kbd{font-size:15px}
.shots{display:grid;grid-template-columns:1fr 1fr;gap:10px;margin:8px 0 0}
@media (max-width:800px){.shots{grid-template-columns:1fr}}
figure{margin:0;min-width:0}
figcaption{margin:0 0 3px;color:var(--muted);font-size:12px}
.shot{position:relative;display:block;overflow:hidden;line-height:0;border:1px solid var(--line);background:#e6e8ee}
.shot a{display:block}
.shot img{display:block;width:100%;height:auto}
.shot.stale{border:3px solid var(--warn)}
.shot .stale-badge{position:absolute;left:0;top:0;right:0;z-index:2;padding:3px 6px;background:rgba(168,100,0,.92);color:#fff;font:600 12px/1.35 system-ui,sans-serif;pointer-events:none}
body.hide-markers .shot .stale-badge{display:block}
.shot.missing{display:flex;align-items:center;justify-content:center;line-height:1.4;color:var(--muted);font-style:italic;padding:8px;text-align:center}
.ov{position:absolute;left:0;top:0;width:100%;height:100%;pointer-events:none}
.ov line{stroke:var(--mk);stroke-width:3;stroke-dasharray:8 5}
.mk{position:absolute;width:26px;height:26px;margin:0;transform:translate(-50%,-50%);border:3px solid var(--mk);border-radius:50%;box-shadow:0 0 0 2px rgba(255,255,255,.85),inset 0 0 0 2px rgba(255,255,255,.85);pointer-events:none;line-height:1}
.mk::after{content:"";position:absolute;left:50%;top:50%;width:4px;height:4px;margin:-2px 0 0 -2px;border-radius:50%;background:var(--mk)}
.mk.inferred{border-style:dashed}
.mk.right_click,.mk.middle_click{border-color:var(--mk2)}
.mk.right_click::after,.mk.middle_click::after{background:var(--mk2)}
.mk.move{width:18px;height:18px;border-width:2px;border-color:var(--mk3)}
.mk.move::after{background:var(--mk3)}
.mk.drag_start{border-style:dotted}
.mk.drag_end{background:rgba(255,45,85,.35)}
.mk.scroll{border-color:var(--mk2)}
.mk.scroll::after{display:none}
.mk .dir{position:absolute;left:0;top:0;width:100%;height:100%;display:flex;align-items:center;justify-content:center;font:700 14px/1 system-ui,sans-serif;color:var(--mk2);text-shadow:0 0 2px #fff}
.mk .lbl{position:absolute;left:100%;top:-10px;margin-left:3px;padding:1px 4px;border-radius:4px;background:var(--mk);color:#fff;font:700 11px/1.2 system-ui,sans-serif;white-space:nowrap}
.mk.scroll .lbl,.mk.right_click .lbl,.mk.middle_click .lbl{background:var(--mk2)}
body.hide-markers .mk,body.hide-markers .ov{display:none}
`;

/** The report's script: keyboard navigation between steps (j/k, arrows, Home/End) and the marker toggle (m). */
export const REPORT_JS = `(function () {
  'use strict';
  var steps = Array.prototype.slice.call(document.querySelectorAll('section.step'));
  var chips = Array.prototype.slice.call(document.querySelectorAll('nav.index a'));
  var cur = -1;
  function select(i, scroll) {
    if (!steps.length) return;
    i = Math.max(0, Math.min(steps.length - 1, i));
    if (cur >= 0) {
      steps[cur].classList.remove('current');
      steps[cur].removeAttribute('aria-current');
      if (chips[cur]) chips[cur].classList.remove('current');
    }
    cur = i;
    var el = steps[i];
    el.classList.add('current');
    el.setAttribute('aria-current', 'step');
    if (chips[i]) chips[i].classList.add('current');
    if (scroll) el.scrollIntoView({ block: 'start' });
    try { history.replaceState(null, '', '#' + el.id); } catch (e) { /* some file:// setups refuse */ }
  }
  document.addEventListener('keydown', function (e) {
    if (e.altKey || e.ctrlKey || e.metaKey || e.defaultPrevented) return;
    var t = e.target;
    if (t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))) return;
    var next;
    switch (e.key) {
      case 'j': case 'ArrowDown': next = cur + 1; break;
      case 'k': case 'ArrowUp': next = cur < 0 ? 0 : cur - 1; break;
      case 'Home': next = 0; break;
      case 'End': next = steps.length - 1; break;
      case 'm': document.body.classList.toggle('hide-markers'); e.preventDefault(); return;
      default: return;
    }
    e.preventDefault();
    select(next, true);
  });
  steps.forEach(function (el, i) { el.addEventListener('click', function () { select(i, false); }); });
  chips.forEach(function (a, i) { a.addEventListener('click', function (e) { e.preventDefault(); select(i, true); }); });
  var m = /^#step-(\\d+)$/.exec(location.hash);
  if (m) select(Number(m[1]), true);
})();
`;

/** `'sha256-…'` CSP source for `REPORT_JS`. */
export const REPORT_JS_HASH = `'sha256-${createHash('sha256').update(REPORT_JS, 'utf8').digest('base64')}'`;

/** The page's Content-Security-Policy: no network, only this script, inline styles, local images. */
export const REPORT_CSP = ["default-src 'none'", "img-src 'self' file:", "style-src 'unsafe-inline'", `script-src ${REPORT_JS_HASH}`, "base-uri 'none'", "form-action 'none'"].join(
  '; ',
);
