/**
 * What the adapters' CLI builders share: reading their settings from the arguments after `--`
 * (`vncua run|eval --agent NAME … -- --model X`) and from environment variables, flags winning.
 *
 * `adapterArgs(adapter, ctx.args, FLAGS, env)` parses the arguments with node:util's parseArgs
 * (strict: an unknown flag, a missing value or a positional argument is CLI_ERR_BAD_ARGS naming the
 * adapter, the flag and the flags it takes) and returns readers that take a flag and, optionally,
 * the environment variable(s) it falls back to. A malformed value is CLI_ERR_BAD_ARGS whose
 * `details.argument` is where it came from (the flag, or the environment variable); a missing
 * required setting is CLI_ERR_BAD_ARGS naming the environment variable and the flag. Empty
 * environment variables count as unset. Secrets (API keys, tokens) have no flags: read them with
 * `env()`, so they never appear on a command line.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { VncuaError } from '../harness/errors.ts';
import { pricesProblem, type Prices } from './pricing.ts';

/** A width and height in pixels: harness's one size type. */
export type { ScreenSize as Size } from '../harness/desktop/size.ts';
import { parseWxH, type ScreenSize as Size } from '../harness/desktop/size.ts';

/** A setting's value and where it came from (`--flag` or the environment variable's name). */
export interface Setting {
  value: string;
  from: string;
}

/** CLI_ERR_BAD_ARGS for `adapter`: `argument` (a flag or an environment variable) is `why`. */
export function badArg(adapter: string, argument: string, value: unknown, why: string): VncuaError {
  return new VncuaError('CLI_ERR_BAD_ARGS', `${adapter} agent: ${argument} ${why}.`, { details: { argument, value } });
}

/** `WxH` (e.g. 1024x640) as a size of whole pixels ≥ 1; null when malformed. */
export function parseSize(text: string): Size | null {
  const size = parseWxH(text);
  return size !== null && size.width >= 1 && size.height >= 1 ? size : null;
}

/** A whole number ≥ 1 written in decimal; null otherwise. */
export function parsePositiveInt(text: string): number | null {
  if (!/^\s*\d+\s*$/.test(text)) return null;
  const n = Number(text);
  return Number.isSafeInteger(n) && n >= 1 ? n : null;
}

/** The readers `adapterArgs` returns. Each takes the flag (`'model'` for `--model`) and the environment variables it falls back to, in order. */
export interface AdapterArgs<F extends string> {
  /** The flags given, as parsed. */
  readonly values: Readonly<Partial<Record<F, string>>>;
  /** The first non-empty environment variable of `names` (for secrets, which have no flag). */
  env(...names: string[]): Setting | undefined;
  /** The flag's value, else the first non-empty environment variable's. A flag given empty is an error. */
  get(flag: F, ...envNames: string[]): Setting | undefined;
  /** Like get(), the value only. */
  string(flag: F, ...envNames: string[]): string | undefined;
  /** An http:// or https:// URL. */
  url(flag: F, ...envNames: string[]): string | undefined;
  /** A whole number ≥ 1. */
  positiveInt(flag: F, ...envNames: string[]): number | undefined;
  /** `WxH`, e.g. 1024x640. */
  size(flag: F, ...envNames: string[]): Size | undefined;
  /** One of `allowed`. */
  oneOf<T extends string>(allowed: readonly T[], flag: F, ...envNames: string[]): T | undefined;
  /** A comma-separated list (items trimmed, empty ones dropped). */
  list(flag: F, ...envNames: string[]): string[] | undefined;
  /** Prices from a JSON file (byom/pricing.ts Prices: `{ "model": { "input": 3, "output": 12 } }`, USD per 1M tokens), its path relative to the working directory. */
  prices(flag: F, ...envNames: string[]): Prices | undefined;
  /** CLI_ERR_BAD_ARGS for a required setting that is missing: "set ENV or pass -- --flag VALUE". `flag` null for secrets. */
  missing(field: string, flag: F | null, envNames: readonly string[], hint: string): VncuaError;
  /** CLI_ERR_BAD_ARGS for a bad value of `setting`. */
  bad(setting: Setting, why: string): VncuaError;
}

/**
 * Parse `args` (the arguments after `--`) for the adapter named `adapter` (used in messages), which
 * takes the flags `flags` (all with a value), and read settings from them and `env`.
 */
export function adapterArgs<F extends string>(adapter: string, args: readonly string[] | undefined, flags: readonly F[], env: NodeJS.ProcessEnv): AdapterArgs<F> {
  const takes = `it takes ${flags.map((f) => `--${f}`).join(', ')}`;
  let values: Partial<Record<F, string>>;
  try {
    ({ values } = parseArgs({
      args: [...(args ?? [])],
      options: Object.fromEntries(flags.map((f) => [f, { type: 'string' }])) as Record<F, { type: 'string' }>,
      strict: true,
      allowPositionals: false,
    }) as { values: Partial<Record<F, string>> });
  } catch (e) {
    const message = (e as Error).message.replace(/\s*\n\s*/g, ' ');
    const argument = (/'(-{1,2}[^' <=]+)[^']*'/.exec(message) ?? /'([^']+)'/.exec(message))?.[1] ?? (args ?? []).join(' ');
    throw new VncuaError('CLI_ERR_BAD_ARGS', `${adapter} agent: ${message} (${takes}, after \`--\`).`, { cause: e, details: { argument, flags: flags.map((f) => `--${f}`) } });
  }
  const bad = (s: Setting, why: string) => badArg(adapter, s.from, s.value, why);
  const fromEnv = (names: readonly string[]): Setting | undefined => {
    for (const name of names) {
      const v = env[name];
      if (v !== undefined && v.trim() !== '') return { value: v.trim(), from: name };
    }
    return undefined;
  };
  const get = (flag: F, ...envNames: string[]): Setting | undefined => {
    const v = values[flag];
    if (v !== undefined) {
      const s = { value: v.trim(), from: `--${flag}` };
      if (s.value === '') throw bad(s, 'needs a value');
      return s;
    }
    return fromEnv(envNames);
  };
  return {
    values,
    env: (...names) => fromEnv(names),
    get,
    string: (flag, ...envNames) => get(flag, ...envNames)?.value,
    url(flag, ...envNames) {
      const s = get(flag, ...envNames);
      if (!s) return undefined;
      let u: URL;
      try {
        u = new URL(s.value);
      } catch {
        throw bad(s, 'must be an http:// or https:// URL');
      }
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw bad(s, 'must be an http:// or https:// URL');
      return s.value;
    },
    positiveInt(flag, ...envNames) {
      const s = get(flag, ...envNames);
      if (!s) return undefined;
      const n = parsePositiveInt(s.value);
      if (n === null) throw bad(s, 'must be a whole number ≥ 1');
      return n;
    },
    size(flag, ...envNames) {
      const s = get(flag, ...envNames);
      if (!s) return undefined;
      const size = parseSize(s.value);
      if (!size) throw bad(s, 'must be WxH in pixels, e.g. 1024x640');
      return size;
    },
    oneOf(allowed, flag, ...envNames) {
      const s = get(flag, ...envNames);
      if (!s) return undefined;
      if (!(allowed as readonly string[]).includes(s.value)) throw bad(s, `must be ${allowed.length === 2 ? allowed.join(' or ') : `one of ${allowed.join(', ')}`}`);
      return s.value as (typeof allowed)[number];
    },
    list(flag, ...envNames) {
      const s = get(flag, ...envNames);
      if (!s) return undefined;
      return s.value
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean);
    },
    prices(flag, ...envNames) {
      const s = get(flag, ...envNames);
      if (!s) return undefined;
      const path = resolve(s.value);
      let text: string;
      try {
        text = readFileSync(path, 'utf8');
      } catch (e) {
        throw bad(s, `cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}: ${path}); give a JSON file of prices per model`);
      }
      let data: unknown;
      try {
        data = JSON.parse(text);
      } catch (e) {
        throw bad(s, `is not JSON (${(e as Error).message}); give { "MODEL": { "input": N, "output": N } } in USD per 1M tokens`);
      }
      const problem = pricesProblem(data);
      if (problem) throw bad(s, `holds bad prices: ${problem}`);
      return data as Prices;
    },
    missing(field, flag, envNames, hint) {
      const where = flag === null ? `set ${envNames.join(' or ')}` : `set ${envNames.join(' or ')} or pass \`-- --${flag} …\``;
      return new VncuaError('CLI_ERR_BAD_ARGS', `${adapter} agent: no ${field}: ${where} (${hint}).`, {
        details: { argument: flag === null ? envNames[0] : `--${flag}`, field, env: [...envNames], ...(flag === null ? {} : { flag: `--${flag}` }) },
      });
    },
    bad,
  };
}
