import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';

/**
 * The README and docs/ point at each other and at source files; a moved or renamed file, or a
 * renamed heading, silently breaks those links. Every relative link must name a file or folder
 * that exists and, with a `#fragment`, a heading of that Markdown file.
 */
const ROOT = path.resolve(__dirname, '../..');

function markdownFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return markdownFiles(full);
    return entry.name.endsWith('.md') ? [full] : [];
  });
}

/** Text outside fenced code blocks and inline code, where `[a](b)` is not a link. */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, 'code');
}

/** Targets of inline links `[text](target)` and images `![alt](target)`, without a title. */
export function linkTargets(markdown: string): string[] {
  const targets: string[] = [];
  for (const match of prose(markdown).matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) targets.push(match[1]!);
  return targets;
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const withoutFences = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  for (const match of withoutFences.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = match[1]!
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** What is wrong with one relative link from `file`, or null when it resolves. */
function brokenLink(file: string, target: string): string | null {
  const [rawPath, fragment] = target.split('#', 2) as [string, string | undefined];
  const resolved = rawPath === '' ? file : path.resolve(path.dirname(file), decodeURIComponent(rawPath));
  if (!fs.existsSync(resolved)) return `${target}: no such file`;
  if (fragment === undefined || fragment === '' || !resolved.endsWith('.md')) return null;
  const anchors = headingAnchors(fs.readFileSync(resolved, 'utf8'));
  return anchors.has(decodeURIComponent(fragment)) ? null : `${target}: no heading #${fragment} in ${path.relative(ROOT, resolved)}`;
}

const isExternal = (target: string): boolean => /^[a-z][a-z0-9+.-]*:/i.test(target);

describe('documentation links', () => {
  const files = [path.join(ROOT, 'README.md'), ...markdownFiles(path.join(ROOT, 'docs'))];

  it('finds the README and the docs and their links', () => {
    expect(files.map((f) => path.relative(ROOT, f))).to.include.members(['README.md', 'docs/api.md', 'docs/configuration.md', 'docs/operations.md']);
    const readmeLinks = linkTargets(fs.readFileSync(files[0]!, 'utf8')).filter((t) => !isExternal(t));
    expect(readmeLinks.length).to.be.greaterThan(10);
  });

  it('computes anchors as GitHub does and reads links outside code only', () => {
    expect([...headingAnchors('# The API\n## `POST /v1/files` (uploads)\n## Money\n## Money\n```\n# not a heading\n```\n')]).to.deep.equal([
      'the-api',
      'post-v1files-uploads',
      'money',
      'money-1',
    ]);
    expect(linkTargets('[a](x.md) `[b](y.md)` ![c](img.png "title")\n```\n[d](z.md)\n```\n')).to.deep.equal(['x.md', 'img.png']);
  });

  for (const file of files) {
    it(`every relative link of ${path.relative(ROOT, file)} resolves`, () => {
      const text = fs.readFileSync(file, 'utf8');
      const broken = linkTargets(text)
        .filter((target) => !isExternal(target))
        .map((target) => brokenLink(file, target))
        .filter((problem): problem is string => problem !== null);
      expect(broken).to.deep.equal([]);
    });
  }
});
