/**
 * Finding the JSON object in a model's reply. Tolerant: the object may be the whole reply, sit in
 * a ```json (or bare ```) fence, or be surrounded by prose ("I will click the button: {...}.").
 * Candidates are tried in that order; within prose, every balanced `{...}` (string- and
 * escape-aware) is tried from the left, and the first one that parses to an object wins, one with
 * an "action" key preferred. Validation of what was found is the caller's (strict) job.
 */

/** The object found, or why none was found (sent back to the model). */
export type Extracted = { ok: true; value: Record<string, unknown> } | { ok: false; error: string };

const FENCE = /```[ \t]*([A-Za-z0-9_-]*)[ \t]*\r?\n?([\s\S]*?)```/g;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function tryParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Every balanced top-level `{...}` substring of `text`, left to right (braces inside JSON strings ignored). */
export function balancedObjects(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  let escaped = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (depth > 0 && inString) {
      if (escaped) escaped = false;
      else if (c === '\\') escaped = true;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"' && depth > 0) inString = true;
    else if (c === '{') {
      if (depth === 0) start = i;
      depth++;
    } else if (c === '}' && depth > 0) {
      depth--;
      if (depth === 0) out.push(text.slice(start, i + 1));
    }
  }
  return out;
}

/** Pick the object to use among parsed candidates: the first with an "action" key, else the first object. */
function pick(values: unknown[]): Record<string, unknown> | undefined {
  const objects = values.filter(isObject);
  return objects.find((o) => 'action' in o) ?? objects[0];
}

/** Extract the JSON object from a model reply (see the module comment). */
export function extractJsonObject(reply: string | null | undefined): Extracted {
  const text = (reply ?? '').trim();
  if (text === '') return { ok: false, error: 'the reply was empty; answer with one JSON object' };
  const whole = tryParse(text);
  if (isObject(whole)) return { ok: true, value: whole };
  if (Array.isArray(whole)) return { ok: false, error: 'the reply is a JSON array; answer with exactly one JSON object (one action per reply)' };

  const fenced: unknown[] = [];
  for (const m of text.matchAll(FENCE)) {
    const body = (m[2] ?? '').trim();
    const v = tryParse(body);
    if (v !== undefined) fenced.push(v);
    else fenced.push(...balancedObjects(body).map(tryParse));
  }
  const fromFence = pick(fenced);
  if (fromFence) return { ok: true, value: fromFence };

  const candidates = balancedObjects(text);
  const fromProse = pick(candidates.map(tryParse));
  if (fromProse) return { ok: true, value: fromProse };
  if (candidates.length > 0) {
    return {
      ok: false,
      error: `the reply holds ${candidates.length === 1 ? 'a {...} block' : `${candidates.length} {...} blocks`} but none is valid JSON (use double quotes around keys and strings, no comments, no trailing commas)`,
    };
  }
  return { ok: false, error: 'the reply holds no JSON object; answer with one JSON object such as {"action": "click", "coordinate": [100, 200]}' };
}
