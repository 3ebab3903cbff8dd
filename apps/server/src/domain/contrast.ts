// WCAG 2.x contrast (https://www.w3.org/TR/WCAG21/#dfn-contrast-ratio), for a merchant's accent
// color on the hosted checkout: the color is the pay button's background under white text, and
// the color of text on the white page (the selected method, "Código copiado", the success
// heading), so it must reach AA for normal text, 4.5:1, against white.
export const WCAG_AA_NORMAL_TEXT = 4.5;
export const HEX_COLOR = /^#[0-9a-fA-F]{6}$/;

export function relativeLuminance(hex: string): number {
  if (!HEX_COLOR.test(hex)) throw new RangeError(`not a #rrggbb color: ${hex}`);
  const channel = (i: number) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
}

// From 1 (the same) to 21 (black on white), either order.
export function contrastRatio(a: string, b: string): number {
  const [hi, lo] = [relativeLuminance(a), relativeLuminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

// The ratio as people quote it: rounded down to two decimals, so 4.499 never reads "4.50:1".
export function formatRatio(ratio: number): string {
  return `${(Math.floor(ratio * 100) / 100).toFixed(2)}:1`;
}
