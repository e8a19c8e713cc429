/**
 * Test-only: a page of coloured boxes (a click toggles a gradient and a counter), a radial-gradient
 * "photo" (JPEG-like content) and a link (hand cursor), served over HTTP on 127.0.0.1.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The page's background colour. */
export const PAGE_BACKGROUND = [244, 241, 234];
/** Each box's own colour, by i % 4. */
export const BOX_COLOURS = [
  [0xc0, 0x39, 0x2b],
  [0x29, 0x80, 0xb9],
  [0x27, 0xae, 0x60],
  [0x8e, 0x44, 0xad],
];

const PAGE = `<!doctype html><html><head><style>
  body { margin: 0; font: 18px sans-serif; background: rgb(${PAGE_BACKGROUND.join(',')}); }
  .grid { display: grid; grid-template-columns: repeat(4, 200px); gap: 12px; padding: 24px; }
  .box { height: 120px; border-radius: 10px; display: flex; align-items: center; justify-content: center; color: white; font-weight: bold; }
  ${BOX_COLOURS.map((c, i) => `.b${i} { background: rgb(${c.join(',')}); }`).join(' ')}
  .on { background: linear-gradient(135deg, #f39c12, #16a085) !important; color: #111; }
  #photo { margin: 0 24px; width: 600px; height: 200px; background: radial-gradient(circle at 30% 40%, #fff, #e67e22 30%, #2c3e50 70%); }
  a { margin: 24px; display: inline-block; font-size: 28px; }
  input { margin: 0 24px; font-size: 20px; width: 400px; }
</style></head><body>
  <div class="grid">${[0, 1, 2, 3, 4, 5, 6, 7].map((i) => `<div class="box b${i % 4}" onclick="this.classList.toggle('on'); this.textContent = 'clicked ' + (++window.n || (window.n = 1))">box ${i}</div>`).join('')}</div>
  <div id="photo"></div>
  <a href="#" onclick="return false">a link (hand cursor)</a>
</body></html>`;

/** Centre of box i (CSS pixels = screen pixels: the kiosk window sits at 0,0). */
export const BOX = (i: number) => ({ x: 24 + (i % 4) * 212 + 100, y: 24 + Math.floor(i / 4) * 132 + 60 });
/** A point on the link. */
export const LINK = { x: 80, y: 24 + 2 * 132 + 200 + 40 };

/** Serve the page; `url` is its address. */
export async function serveBoxesPage(): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((_q, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(PAGE);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
