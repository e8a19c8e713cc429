/**
 * A tiny JSON Schema validator for tests, covering exactly the keywords our generated schemas use
 * (no ajv in the project). An unknown keyword throws, so a schema change cannot pass unchecked.
 */
type Schema = Record<string, unknown> | boolean;

const ANNOTATIONS = new Set(['$schema', 'title', 'description']);
const KEYWORDS = new Set([
  'type', 'items', 'anyOf', 'oneOf', 'properties', 'required', 'additionalProperties',
  'minimum', 'maximum', 'const', 'enum', 'minLength', 'propertyNames',
]);

/** Errors of `value` against `schema` (empty when valid), each as "path: problem". */
export function validateJsonSchema(schema: Schema, value: unknown, path = '$'): string[] {
  if (schema === true) return [];
  if (schema === false) return [`${path}: no value allowed`];
  for (const k of Object.keys(schema)) {
    if (!KEYWORDS.has(k) && !ANNOTATIONS.has(k)) throw new Error(`mini-json-schema: unsupported keyword ${k} at ${path}`);
  }
  const errors: string[] = [];
  const s = schema as Record<string, any>;
  if (s.type !== undefined) {
    const types: string[] = Array.isArray(s.type) ? s.type : [s.type];
    if (!types.some((t) => hasType(value, t))) return [`${path}: expected ${types.join('|')}`];
  }
  if (s.const !== undefined && value !== s.const) errors.push(`${path}: expected ${JSON.stringify(s.const)}`);
  if (s.enum !== undefined && !(s.enum as unknown[]).includes(value)) errors.push(`${path}: not in enum`);
  if (typeof value === 'number') {
    if (s.minimum !== undefined && value < s.minimum) errors.push(`${path}: below minimum`);
    if (s.maximum !== undefined && value > s.maximum) errors.push(`${path}: above maximum`);
  }
  if (typeof value === 'string' && s.minLength !== undefined && value.length < s.minLength) errors.push(`${path}: too short`);
  if (Array.isArray(value) && s.items !== undefined) {
    value.forEach((v, i) => errors.push(...validateJsonSchema(s.items, v, `${path}[${i}]`)));
  }
  if (isObject(value)) {
    const props: Record<string, Schema> = s.properties ?? {};
    for (const r of (s.required ?? []) as string[]) if (!(r in value)) errors.push(`${path}: missing ${r}`);
    for (const [k, v] of Object.entries(value)) {
      if (s.propertyNames !== undefined) errors.push(...validateJsonSchema(s.propertyNames, k, `${path}.${k}(name)`));
      if (k in props) errors.push(...validateJsonSchema(props[k]!, v, `${path}.${k}`));
      else if (s.additionalProperties !== undefined) errors.push(...validateJsonSchema(s.additionalProperties, v, `${path}.${k}`));
    }
  }
  if (s.anyOf !== undefined) {
    const ok = (s.anyOf as Schema[]).some((sub) => validateJsonSchema(sub, value, path).length === 0);
    if (!ok) errors.push(`${path}: matches no anyOf branch`);
  }
  if (s.oneOf !== undefined) {
    const n = (s.oneOf as Schema[]).filter((sub) => validateJsonSchema(sub, value, path).length === 0).length;
    if (n !== 1) errors.push(`${path}: matches ${n} oneOf branches, expected exactly 1`);
  }
  return errors;
}

function hasType(v: unknown, t: string): boolean {
  switch (t) {
    case 'integer':
      return Number.isInteger(v);
    case 'number':
      return typeof v === 'number' && Number.isFinite(v);
    case 'string':
      return typeof v === 'string';
    case 'boolean':
      return typeof v === 'boolean';
    case 'null':
      return v === null;
    case 'object':
      return isObject(v);
    case 'array':
      return Array.isArray(v);
    default:
      throw new Error(`mini-json-schema: unsupported type ${t}`);
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
