/** `vncua demo` (stub until the desktop and client land). */
export async function run(_argv: string[]): Promise<number> {
  process.stderr.write('vncua demo: not implemented yet\n');
  return 1;
}
