/**
 * IDP_BRAND_COLOR on the pages: whatever colour an operator picks, the text on it keeps WCAG 2.1
 * AA contrast (4.5:1), and so does the hover shade.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { brandStylesheet, contrastRatio, focusRingOn, relativeLuminance, textColorOn } from '../../src/routes/shared/brand.ts';

const hexColor = fc.integer({ min: 0, max: 0xffffff }).map((n) => `#${n.toString(16).padStart(6, '0')}`);
const declared = (css: string, name: string) => new RegExp(`--${name}: (#[0-9a-f]{6});`).exec(css)?.[1] ?? '';

describe('the brand colour', () => {
  it('computes WCAG luminance and contrast', () => {
    expect(relativeLuminance('#000000')).toBe(0);
    expect(relativeLuminance('#ffffff')).toBeCloseTo(1, 10);
    expect(contrastRatio('#000000', '#ffffff')).toBeCloseTo(21, 10);
    expect(contrastRatio('#ffffff', '#000000')).toBeCloseTo(21, 10);
    // The default primary blue against white, as the stylesheet's comment claims.
    expect(contrastRatio('#1d4ed8', '#ffffff')).toBeGreaterThan(6.5);
  });

  it('writes white on dark colours and black on light ones', () => {
    expect(textColorOn('#0b5cad')).toBe('#ffffff');
    expect(textColorOn('#ffd400')).toBe('#000000');
    expect(textColorOn('#ffffff')).toBe('#000000');
    expect(textColorOn('#000000')).toBe('#ffffff');
  });

  it('keeps button text at AA contrast on any colour, hovered or not', () => {
    fc.assert(fc.property(hexColor, (color) => {
      const css = brandStylesheet(color);
      const text = declared(css, 'primary-text');
      expect(declared(css, 'primary')).toBe(color);
      expect(declared(css, 'brand-text')).toBe(text);
      expect(contrastRatio(color, text)).toBeGreaterThanOrEqual(4.5);
      expect(contrastRatio(declared(css, 'primary-hover'), text)).toBeGreaterThanOrEqual(contrastRatio(color, text) - 1e-9);
    }), { numRuns: 500 });
  });

  it('draws focus rings in the brand colour, at 3:1 against the card in light and dark mode', () => {
    fc.assert(fc.property(hexColor, (color) => {
      const css = brandStylesheet(color);
      const [light, dark] = [...css.matchAll(/--focus: (#[0-9a-f]{6});/g)].map((m) => m[1] ?? '');
      expect(contrastRatio(light ?? '', '#ffffff')).toBeGreaterThanOrEqual(3);
      expect(contrastRatio(dark ?? '', '#111827')).toBeGreaterThanOrEqual(3);
      // A colour that already stands out from the card is the ring as it is.
      if (contrastRatio(color, '#ffffff') >= 3) expect(light).toBe(color);
    }), { numRuns: 500 });
    expect(focusRingOn('#0b5cad', '#ffffff')).toBe('#0b5cad');
    expect(brandStylesheet('#0b5cad')).toContain('--focus-halo: rgb(11 92 173 / 0.3);');
  });
});
