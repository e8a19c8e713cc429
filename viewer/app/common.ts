/**
 * What the pages of vncua serve share (viewer/app/app.ts's run list and trace viewer, compare.ts's
 * comparison): HTML escaping, a run's status, durations, and painting raw RGB on a canvas.
 */

/** `s` with &, <, > and " escaped for HTML text and attributes. */
export const esc = (s: string) => s.replace(/[&<>"]/g, (c) => `&${{ '&': 'amp', '<': 'lt', '>': 'gt', '"': 'quot' }[c]};`);

/** What statusOf() reads of a listed run. */
export interface StatusFields {
  invalid: unknown;
  infra_error: boolean;
  success: boolean;
  status: string;
  /** The stop status the run ended with (needs_human, cost_cap…), counted apart; null otherwise. */
  stopped?: string | null;
}

/** success / failure / infra_error / partial / invalid, or the stop status (needs_human, cost_cap…), as the status filter names them. */
export function statusOf(r: StatusFields): string {
  if (r.invalid) return 'invalid';
  if (r.infra_error) return 'infra_error';
  if (r.stopped) return r.stopped;
  if (r.success) return 'success';
  if (r.status === 'partial') return 'partial';
  return 'failure';
}

/** Dollars: two decimals from $1, else three significant digits. */
export const usd = (x: number) => (x >= 1 ? `$${x.toFixed(2)}` : `$${x.toPrecision(3).replace(/\.?0+$/, '')}`);

/** Milliseconds as "12.3 s" ('' when unknown). */
export const secs = (ms: number | null | undefined) => (ms == null ? '' : `${(ms / 1000).toFixed(1)} s`);

/** Put `rgb` (width x height x 3 bytes, as api/frame sends it) on `canvas` unchanged, resizing the canvas to the frame. */
export function putRgb(canvas: HTMLCanvasElement, width: number, height: number, rgb: Uint8Array): void {
  if (canvas.width !== width || canvas.height !== height) {
    canvas.width = width;
    canvas.height = height;
  }
  const img = new ImageData(width, height);
  const px = img.data;
  for (let i = 0, j = 0; i < rgb.length; i += 3, j += 4) {
    px[j] = rgb[i]!;
    px[j + 1] = rgb[i + 1]!;
    px[j + 2] = rgb[i + 2]!;
    px[j + 3] = 255;
  }
  canvas.getContext('2d')!.putImageData(img, 0, 0);
}
