/**
 * `vncua` command-line entry. Each subcommand lives in its own file and is loaded lazily,
 * so `vncua desktop up` does not pay for loading the evaluation code.
 */
import { installStdioRedaction } from '../harness/secrets/stdio.ts';
import { VncuaError } from '../harness/errors.ts';

type Command = { summary: string; load: () => Promise<{ run(argv: string[]): Promise<number> }> };

const COMMANDS: Record<string, Command> = {
  desktop: { summary: 'desktop up [--size WxH] [--url URL] [--password-file FILE] | desktop down | desktop list', load: () => import('./desktop.ts') },
  run: { summary: 'run --agent MODULE [--task T] [--url URL] [--max-steps N] [--out DIR] [--vnc URL --cdp URL] [--script FILE]', load: () => import('./run.ts') },
  eval: { summary: 'eval --tasks FILE --agent NAME|MODULE [--resolution WxH ...] [--workers N] [--out DIR] ...', load: () => import('./eval.ts') },
  worker: {
    summary:
      'worker --queue redis://HOST:PORT/N [--concurrency N] [--provider local|docker] [--pool N]: run the runs of `vncua eval --queue` | worker --shard-from-env EVAL OPTIONS',
    load: () => import('./worker.ts'),
  },
  process: { summary: 'process <root> [--overwrite] [--jobs N] [--video]: screenshots and step reports from recordings', load: () => import('./process.ts') },
  score: { summary: 'score DIR: scores.json, scores.md, scores.html for every run under DIR', load: () => import('./score.ts') },
  serve: {
    summary: 'serve [ROOT] [--port N] [--host ADDR]: a web app listing the runs under ROOT, replaying each frame by frame, the running ones live (takeover)',
    load: () => import('./serve.ts'),
  },
  'export-trace': { summary: 'export-trace --format uitask RUN [--out FILE] [--overwrite]: the trace as uitask writes execution.json', load: () => import('./export-trace.ts') },
  export: {
    summary: 'export ROOT --format jsonl [--out FILE|DIR] [--successful] [--agent A] [--group G]: one JSON line per step, PNGs beside it',
    load: () => import('./export.ts'),
  },
  demo: { summary: 'the basic suite with the replay agent on a local desktop, processed and scored', load: () => import('./demo.ts') },
};

function usage(): string {
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  vncua ${name.padEnd(12)} ${c.summary}`);
  return `usage:\n${lines.join('\n')}\n  vncua COMMAND --help   its options; a value goes as --flag VALUE or --flag=VALUE\n`;
}

/** Run the CLI with the given arguments; resolves to the process exit code. */
export async function main(argv: string[]): Promise<number> {
  // No secret (auth binding values, secrets, model API keys) is ever printed as plaintext.
  installStdioRedaction();
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(usage());
    return name ? 0 : 2;
  }
  const cmd = COMMANDS[name];
  if (!cmd) {
    process.stderr.write(`vncua: unknown command "${name}"\n${usage()}`);
    return 2;
  }
  try {
    const mod = await cmd.load();
    return await mod.run(rest);
  } catch (e) {
    if (e instanceof VncuaError) {
      process.stderr.write(`vncua ${name}: ${e.code}: ${e.message}\n`);
      return 1;
    }
    throw e;
  }
}
