/**
 * Every relative link of the README, CONTRIBUTING.md, SECURITY.md and docs/ leads somewhere: the
 * file (or folder) exists, and an `#anchor` names a heading of the page it points to, by the
 * rules GitHub uses to make a heading's anchor.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/process.ts';

function markdownUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? markdownUnder(path) : path.endsWith('.md') ? [path] : [];
  });
}

const PAGES = [...['README.md', 'CONTRIBUTING.md', 'SECURITY.md'].map((file) => join(ROOT, file)), ...markdownUnder(join(ROOT, 'docs'))];

/** The text a reader sees: fenced blocks and inline code hold examples, not links. */
function prose(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchor of a heading: its text in lower case, punctuation dropped, spaces as hyphens; repeats numbered. */
function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  const withoutFences = markdown.replace(/^```[\s\S]*?^```/gm, '');
  for (const [, heading] of withoutFences.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const text = (heading ?? '').replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1');
    const slug = text.toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
    const count = seen.get(slug) ?? 0;
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
    seen.set(slug, count + 1);
  }
  return anchors;
}

/** The targets of the page's links and images that stay in the repository. */
function relativeTargets(markdown: string): string[] {
  return [...prose(markdown).matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)]
    .map((m) => m[1] as string)
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

function brokenLinks(page: string): string[] {
  const markdown = readFileSync(page, 'utf8');
  return relativeTargets(markdown).flatMap((target) => {
    const [path = '', anchor] = target.split('#');
    const file = path === '' ? page : join(dirname(page), decodeURIComponent(path));
    const where = `${relative(ROOT, page)}: ${target}`;
    if (!existsSync(file)) return [`${where}: no such file`];
    if (anchor === undefined || !file.endsWith('.md')) return [];
    return anchorsOf(readFileSync(file, 'utf8')).has(anchor) ? [] : [`${where}: no such heading`];
  });
}

describe('the documentation\'s links', () => {
  it('lead to a file that exists and a heading it has', () => {
    expect(PAGES.length).toBeGreaterThan(10);
    expect(PAGES.flatMap(brokenLinks)).toStrictEqual([]);
  });

  it('reach every page of docs/ from the README\'s map', () => {
    const linked = new Set(relativeTargets(readFileSync(join(ROOT, 'README.md'), 'utf8')).map((target) => target.split('#')[0]));
    const unlisted = markdownUnder(join(ROOT, 'docs')).map((page) => relative(ROOT, page)).filter((page) => !linked.has(page));
    expect(unlisted, 'add each page to the Documentation section of README.md').toStrictEqual([]);
  });

  it('are anchored as GitHub anchors headings', () => {
    const anchors = anchorsOf('# Checking a deployment: idp doctor\n## 2. Try it: `--dry-run` writes nothing\n## If they move to a new domain\'s passkeys\n## Notes\n## Notes\n```\n# not a heading\n```\n');
    expect([...anchors]).toStrictEqual(['checking-a-deployment-idp-doctor', '2-try-it---dry-run-writes-nothing', 'if-they-move-to-a-new-domains-passkeys', 'notes', 'notes-1']);
  });

  it('are read from the prose, not from code', () => {
    expect(relativeTargets('[a](x.md#y) [b](https://example.com) ![c](images/d.png) `[e](f.md)`')).toStrictEqual(['x.md#y', 'images/d.png']);
  });
});
