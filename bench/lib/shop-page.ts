/** The success-check benches' page: a realistic shop listing (bench/cdp-check.ts, bench/cdp-bridge.ts). */

/** A deterministic shop-listing page of about `bytes` of HTML. */
export function realisticPage(bytes: number): string {
  const head =
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Shop - all products</title>' +
    '<style>body{font-family:sans-serif;margin:0}.card{display:inline-block;width:220px;margin:8px;padding:8px;border:1px solid #ddd}' +
    '.price{font-weight:bold;color:#b12704}.nav a{margin:0 8px}</style></head><body>' +
    '<header><h1>Shop</h1><nav class="nav">' +
    ['Home', 'Deals', 'Electronics', 'Books', 'Garden', 'Toys', 'Account', 'Cart'].map((n) => `<a href="/${n.toLowerCase()}">${n}</a>`).join('') +
    '</nav><form role="search"><input type="search" name="q" placeholder="Search products"><button>Search</button></form></header><main id="results">';
  const tail =
    '</main><footer><p>&copy; 2024 Shop Inc.</p><a href="/terms">Terms</a> <a href="/privacy">Privacy</a></footer>' +
    '<script>document.querySelectorAll(".add").forEach((b) => b.addEventListener("click", () => { b.textContent = "Added"; }));</script></body></html>';
  const cards: string[] = [];
  let size = head.length + tail.length;
  for (let i = 0; size < bytes; i++) {
    const card =
      `<div class="card item" id="item-${i}" data-sku="SKU-${(i * 7919) % 100000}">` +
      `<img src="/img/${i}.jpg" alt="Product ${i}" width="200" height="150">` +
      `<h2 class="title"><a href="/p/${i}">Product number ${i} with a fairly long descriptive name</a></h2>` +
      `<p class="desc">Rated ${(i % 5) + 1} out of 5 by ${(i * 37) % 900} buyers. Free delivery on orders over 25.</p>` +
      `<span class="price">${(9.99 + ((i * 13) % 200)).toFixed(2)}</span> <button class="add" type="button">Add to cart</button></div>`;
    cards.push(card);
    size += card.length;
  }
  return head + cards.join('\n') + tail;
}
