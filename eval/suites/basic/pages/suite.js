/* Shared helpers of the basic suite. The success marker text is assembled here at run time, so no page
   contains it before its task is done (the harness looks for it in the page's HTML). */
'use strict';
window.Suite = (() => {
  let done = false;
  /** Show a line of feedback (kind 'error' in red). */
  function status(text, kind) {
    const el = document.getElementById('status');
    if (!el) return;
    el.textContent = text;
    el.dataset.kind = kind || '';
  }
  /** Mark the task done: show the success marker (once). */
  function succeed(text) {
    if (done) return;
    done = true;
    const box = document.createElement('div');
    box.id = 'success';
    box.className = 'success';
    box.append(text || 'Task complete:');
    const code = document.createElement('span');
    code.className = 'code';
    code.textContent = ['code', '1'].join('#');
    box.append(code);
    document.body.append(box);
  }
  /** True once succeed() ran. */
  function succeeded() {
    return done;
  }
  /** How this page was shown: 'history' for back/forward (bfcache restores included), else 'load'. */
  function arrival(pageshowEvent) {
    if (pageshowEvent && pageshowEvent.persisted) return 'history';
    const nav = performance.getEntriesByType('navigation')[0];
    return nav && nav.type === 'back_forward' ? 'history' : 'load';
  }
  return { status, succeed, succeeded, arrival, $: (id) => document.getElementById(id) };
})();
