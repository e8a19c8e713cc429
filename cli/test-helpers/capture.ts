/** Test-only: a command's run(argv) in this process, with what it prints on stdout and stderr captured. */
export async function runCaptured(run: (argv: string[]) => Promise<number>, argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const o = process.stdout.write.bind(process.stdout);
  const e = process.stderr.write.bind(process.stderr);
  process.stdout.write = ((s: string | Uint8Array) => ((out += String(s)), true)) as typeof process.stdout.write;
  process.stderr.write = ((s: string | Uint8Array) => ((err += String(s)), true)) as typeof process.stderr.write;
  try {
    return { code: await run(argv), out, err };
  } finally {
    process.stdout.write = o;
    process.stderr.write = e;
  }
}
