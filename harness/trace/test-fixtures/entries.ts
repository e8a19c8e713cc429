/** Deterministic trace entries for tests and benchmarks: entry i is always the same. */
import type { TraceEntryInput } from '../schema.ts';

const T0 = 1_763_780_000_000.25;

/** The i-th sample entry: cycles through every action kind, every 7th one a failed attempt with invalid params. */
export function sampleEntry(i: number): TraceEntryInput {
  const started_at = T0 + i * 10;
  const ended_at = started_at + 2.5 + (i % 4);
  const task_marked_complete = i % 3 === 0 ? null : i % 3 === 1;
  const base = { task_marked_complete, started_at, ended_at };
  if (i % 7 === 6) {
    return { ...base, action: 'wait', params: { seconds: -i }, error: { code: 'ACTION_ERR_BAD_ARGUMENT', message: `wait: seconds must be >= 0, got ${-i}` } };
  }
  const x = (i * 37) % 1280;
  const y = (i * 53) % 800;
  switch (i % 9) {
    case 0:
      return { ...base, action: 'mouse_move', params: { position: { x, y } } };
    case 1:
      return { ...base, action: 'mouse_click', params: { position: { x, y }, button: 'left', click_type: 'single' }, meta: { model: { latency_ms: i } } };
    case 2:
      return { ...base, action: 'mouse_drag', params: { start: { x, y }, end: { x: y, y: x % 800 }, button: 'left' } };
    case 3:
      return { ...base, action: 'mouse_scroll', params: { position: { x, y }, direction: 'down', repeat: 1 + (i % 5) } };
    case 4:
      return { ...base, action: 'press_keys', params: { keys: 'ctrl+a' } };
    case 5:
      return { ...base, action: 'type_text', params: { text: `entry ${i} "quoted" ünïcødé\n` } };
    case 6:
      return { ...base, action: 'page_navigation', params: { direction: i % 2 ? 'back' : 'forward' } };
    case 7:
      return { ...base, action: 'wait', params: { seconds: 0.5 } };
    default:
      return { ...base, action: 'finish', params: { status: 'success', answer: i } };
  }
}
