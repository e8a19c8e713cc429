// The explorer test app (agents/explorer/test-pages/planted.ts lists what is planted here).
const panel = document.getElementById('panel-text');
const texts = { 'tab-overview': 'Welcome back. Everything is running.', 'tab-activity': '3 new orders today.' };
for (const tab of document.querySelectorAll('[role="tab"]')) {
  tab.addEventListener('click', () => {
    for (const t of document.querySelectorAll('[role="tab"]')) t.setAttribute('aria-selected', String(t === tab));
    if (tab.id === 'tab-errors') {
      // Planted: a console error when the Errors tab is opened.
      panel.textContent = 'Could not load the error log.';
      console.error('planted: the error log failed to load (tab Errors)');
      return;
    }
    panel.textContent = texts[tab.id];
  });
}

// Planted: a button that freezes the page (its main thread never returns).
document.getElementById('recalculate').addEventListener('click', () => {
  document.getElementById('status').textContent = 'Recalculating...';
  setTimeout(() => {
    for (;;) {}
  }, 50);
});

// A form behind a modal: submitting it throws (planted uncaught exception).
const modal = document.getElementById('modal');
document.getElementById('contact').addEventListener('click', () => {
  modal.hidden = false;
  document.getElementById('name').focus();
});
// The modal closes with Escape or its Cancel button, as real ones do: the explorer tries a dialog's dismiss buttons
// after its others, and opens the dialog again when it was closed before its form was sent.
document.addEventListener('keydown', (e) => {
  if (e.key === 'Escape') modal.hidden = true;
});
document.getElementById('cancel').addEventListener('click', () => {
  modal.hidden = true;
});
document.getElementById('contact-form').addEventListener('submit', (e) => {
  e.preventDefault();
  modal.hidden = true;
  document.getElementById('status').textContent = 'Sending...';
  const reply = null;
  setTimeout(() => {
    // Planted: an uncaught exception after the form is submitted.
    throw new TypeError(`planted: cannot read the reply to ${document.getElementById('email').value || 'the form'} (${reply})`);
  }, 0);
});
