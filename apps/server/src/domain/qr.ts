import QRCode from 'qrcode';

// ISO/IEC 18004 requires >= 4 light modules around the symbol; without them phone cameras
// often fail on dark page backgrounds.
const QUIET_ZONE = 4;
const CACHE_MAX_ENTRIES = 1000;

/**
 * Dark (true) / light (false) modules of the QR symbol for `text`, row-major, WITHOUT the
 * quiet zone. Level M (~15% recovery) keeps Pix payloads at a scannable version while
 * tolerating smudged screens and printouts.
 */
export function qrMatrix(text: string): boolean[][] {
  const { modules } = QRCode.create(text, { errorCorrectionLevel: 'M' });
  const { size, data } = modules;
  const rows: boolean[][] = [];
  for (let y = 0; y < size; y++) {
    const row: boolean[] = new Array<boolean>(size);
    for (let x = 0; x < size; x++) row[x] = data[y * size + x] === 1;
    rows.push(row);
  }
  return rows;
}

function renderSvg(matrix: boolean[][]): string {
  const dim = matrix.length + 2 * QUIET_ZONE;
  // One subpath per horizontal run of dark modules keeps the path short (a Pix code is
  // ~45x45 modules) without needing a polygon-merging pass.
  let d = '';
  for (let y = 0; y < matrix.length; y++) {
    const row = matrix[y];
    let x = 0;
    while (x < row.length) {
      if (!row[x]) {
        x++;
        continue;
      }
      const start = x;
      while (x < row.length && row[x]) x++;
      const run = x - start;
      d += `M${start + QUIET_ZONE} ${y + QUIET_ZONE}h${run}v1h-${run}z`;
    }
  }
  // No width/height: the SVG scales to whatever box the page gives it; crispEdges stops
  // anti-aliasing seams between adjacent modules at fractional scales.
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${dim} ${dim}" shape-rendering="crispEdges">` +
    `<rect width="${dim}" height="${dim}" fill="#fff"/>` +
    `<path fill="#000" d="${d}"/>` +
    `</svg>`
  );
}

// Checkout pages and polling clients re-render the same payment's code over and over; the QR
// encode (masking evaluation in particular) dominates the cost, so remember recent results.
// Map iteration order is insertion order, which makes it a compact LRU.
const svgCache = new Map<string, string>();

/** Standalone, deterministic SVG of the QR code for `text` (4-module quiet zone included). */
export function qrSvg(text: string): string {
  const hit = svgCache.get(text);
  if (hit !== undefined) {
    svgCache.delete(text);
    svgCache.set(text, hit);
    return hit;
  }
  const svg = renderSvg(qrMatrix(text));
  svgCache.set(text, svg);
  if (svgCache.size > CACHE_MAX_ENTRIES) {
    const oldest = svgCache.keys().next().value;
    if (oldest !== undefined) svgCache.delete(oldest);
  }
  return svg;
}
