/**
 * The brand colour (IDP_BRAND_COLOR) as the pages use it: the primary button, the default mark,
 * focus rings and the background glow.
 * Text on it is black or white, whichever contrasts more, so it always meets WCAG 2.1 AA
 * (1.4.3, 4.5:1): the better of the two is never below sqrt(21) ~ 4.58:1.
 */

/** WCAG 2.1 relative luminance of `#rrggbb`. */
export function relativeLuminance(color: string): number {
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = Number.parseInt(color.slice(i, i + 2), 16) / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** WCAG 2.1 contrast ratio of two `#rrggbb` colours, from 1 to 21. */
export function contrastRatio(a: string, b: string): number {
  const [light, dark] = [relativeLuminance(a), relativeLuminance(b)].sort((x, y) => y - x) as [number, number];
  return (light + 0.05) / (dark + 0.05);
}

/** Black or white: the text colour with the higher contrast on `background`. */
export function textColorOn(background: string): '#000000' | '#ffffff' {
  return contrastRatio(background, '#ffffff') >= contrastRatio(background, '#000000') ? '#ffffff' : '#000000';
}

/** `color` moved `share` of the way to `toward`, both `#rrggbb`. */
function mix(color: string, toward: string, share: number): string {
  const channel = (c: string, i: number) => Number.parseInt(c.slice(i, i + 2), 16);
  return `#${[1, 3, 5]
    .map((i) => Math.round(channel(color, i) + (channel(toward, i) - channel(color, i)) * share).toString(16).padStart(2, '0'))
    .join('')}`;
}

/** The page's card in light and dark mode: what a focus ring is seen against. */
const CARD = { light: '#ffffff', dark: '#111827' };

/**
 * The brand colour as a focus ring on `card`: the colour itself where it reaches 3:1 against the
 * card (WCAG 2.1 1.4.11), else moved toward black (light card) or white (dark card) until it does.
 */
export function focusRingOn(color: string, card: string): string {
  const away = relativeLuminance(card) > 0.5 ? '#000000' : '#ffffff';
  let ring = color;
  for (let step = 1; contrastRatio(ring, card) < 3 && step <= 20; step++) ring = mix(color, away, step / 20);
  return ring;
}

/** `#rrggbb` as `rgb(r g b / alpha)`. */
function withAlpha(color: string, alpha: number): string {
  const [r, g, b] = [1, 3, 5].map((i) => Number.parseInt(color.slice(i, i + 2), 16));
  return `rgb(${r} ${g} ${b} / ${alpha})`;
}

/**
 * Stylesheet lines that put the brand colour in place of the default blue, in light and dark
 * mode alike: buttons, the mark, focus rings and the background glow. The hover shade moves away
 * from the text colour, so it only gains contrast. The glow is the colour faded into the page
 * background, behind no text.
 */
export function brandStylesheet(color: string): string {
  const text = textColorOn(color);
  const hover = mix(color, text === '#ffffff' ? '#000000' : '#ffffff', 0.15);
  const focus = { light: focusRingOn(color, CARD.light), dark: focusRingOn(color, CARD.dark) };
  return [
    '',
    '/* IDP_BRAND_COLOR, with the text colour that contrasts most with it. */',
    ':root {',
    `  --primary: ${color};`,
    `  --primary-hover: ${hover};`,
    `  --primary-text: ${text};`,
    `  --brand: ${color};`,
    `  --brand-text: ${text};`,
    `  --focus: ${focus.light};`,
    `  --focus-halo: ${withAlpha(focus.light, 0.3)};`,
    `  --bg-accent: ${mix(color, '#ffffff', 0.8)};`,
    '}',
    '@media (prefers-color-scheme: dark) {',
    '  :root {',
    `    --focus: ${focus.dark};`,
    `    --focus-halo: ${withAlpha(focus.dark, 0.3)};`,
    `    --bg-accent: ${mix(color, '#0b1020', 0.75)};`,
    '  }',
    '}',
    '',
  ].join('\n');
}
