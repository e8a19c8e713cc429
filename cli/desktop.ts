/** `vncua desktop up|down` (stub until the desktop lands). */
export async function run(_argv: string[]): Promise<number> {
  process.stderr.write('vncua desktop: not implemented yet\n');
  return 1;
}
