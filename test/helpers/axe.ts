/**
 * axe-core's WCAG 2.1 A and AA rules on a page as it is, at a desktop width and at a phone's
 * 390 px, with a screenshot of each for people to look at.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { SCREENSHOTS } from './chromium.ts';

export const WIDTHS = [{ width: 1280, height: 800 }, { width: 390, height: 844 }];
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string[]; failureSummary?: string }>;
}

/** The violations at each width, readable; screenshots go to test-artifacts/screenshots/{prefix}-{name}-{width}.png. */
export async function axeViolations(page: Page, name: string, prefix: string): Promise<string[]> {
  const found: string[] = [];
  for (const size of WIDTHS) {
    await page.setViewportSize(size);
    // Evaluated through the DevTools protocol, which the page's CSP (no script at all) does not govern.
    if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE);
    const violations = await page.evaluate(async () => {
      const axe = (window as unknown as { axe: { run(context: Document, options: object): Promise<{ violations: unknown[] }> } }).axe;
      const result = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } });
      return JSON.parse(JSON.stringify(result.violations)) as unknown[];
    }) as Violation[];
    await page.screenshot({ path: join(SCREENSHOTS, `${prefix}-${name.replace(/\W+/g, '-')}-${size.width}.png`), fullPage: true, animations: 'disabled' });
    for (const v of violations) {
      found.push(`${name} at ${size.width}px: ${v.id} (${v.impact}) ${v.help}: ${v.nodes.map((n) => `${n.target.join(' ')} ${n.failureSummary ?? ''}`).join(' | ')}`);
    }
  }
  await page.setViewportSize(WIDTHS[0] ?? { width: 1280, height: 800 });
  return found;
}
