import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';

/**
 * The repository stands on its own: code, its comments and the Markdown docs cite what is in it
 * (docs/, the ADRs, tests, the OpenAPI document) or state the fact themselves — never documents a
 * maintainer does not have (nor their section numbers), nor the numbers of this project's issues
 * that led to a change (the commit history holds those). Public standards (`RFC 9110 §13.1.2`)
 * and another project's issues written with its name (`kubernetes/kubernetes#12345`,
 * `fleet#1650`) are fine, and so is a numbered section of a document the repository holds: named
 * just before the number (`docs/nats-subjects.md` §7), the target of the link whose text holds the
 * number, or, inside a document, one of its own numbered headings.
 */
const OUTSIDE_REFERENCES = [
  /DESIGN(?:\.md)? §/,
  /\bDESIGN\.md\b/,
  /\b[Cc]ontract §/,
  /live-channel\.md|api-contract\.md|agent-behavior\.md|style-and-libs\.md|kwok-clusters\.md|peers\.md|brokkr-v1-openapi\.json/,
  /agent behaviou?r §/i,
  /\bissues? #?\d+\b/i,
  // A hash and a number alone is one of ours; `owner/repo#12`, `fleet#12`, `page.md#7-…` and `&#12;` are not.
  /(?<![\w/.&-])#\d+(?![\w-])/,
  /\.\.\/shared\/(?:reference|DESIGN)/,
];
const SOURCE = /\.(?:ts|js|mjs|cjs|sh|sql|ya?ml)$/;
const MARKDOWN = /\.md$/;

/** A path as written in `file` (relative to it, or to the repository root) → the file, if the repository holds it. */
function resolveDocument(file: string, written: string): string | undefined {
  return [path.join(path.dirname(file), written), path.normalize(written)].find((p) => fs.existsSync(p));
}

const headings = new Map<string, string>();
/** Whether the Markdown document has a heading numbered `section` (`## 7. …`, `### 2.4 …`). */
function hasSection(document: string, section: string): boolean {
  if (!headings.has(document)) headings.set(document, fs.readFileSync(document, 'utf8'));
  return new RegExp(`^#{1,6} ${section.replaceAll('.', '\\.')}[.\\s]`, 'm').test(headings.get(document)!);
}

/** The document a `§` at `at` numbers: named just before it, the target of the link it is in, or the document itself. */
function citedDocument(file: string, line: string, at: number): string | undefined {
  const named = /([\w./-]+\.md)`? ?$/.exec(line.slice(0, at));
  if (named) return resolveDocument(file, named[1]!);
  const link = /\[[^\]]*$/.test(line.slice(0, at)) ? /^[^\]]*\]\(([^)#]*)[^)]*\)/.exec(line.slice(at)) : null;
  if (link) return link[1] ? resolveDocument(file, link[1]) : file;
  return MARKDOWN.test(file) ? file : undefined;
}

/** A section sign and number that is not a public standard's nor one of a document the repository holds. */
function citesOutsideSection(file: string, line: string): boolean {
  for (const match of line.matchAll(/§ ?(\d+(?:\.\d+)*)/g)) {
    if (/RFC \d+,? $/.test(line.slice(0, match.index))) continue;
    const document = citedDocument(file, line, match.index);
    if (!document || !hasSection(document, match[1]!)) return true;
  }
  return false;
}

function outsideCitations(files: string[]): string[] {
  const found: string[] = [];
  for (const file of files) {
    fs.readFileSync(file, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (OUTSIDE_REFERENCES.some((re) => re.test(line)) || citesOutsideSection(file, line)) {
          found.push(`${file}:${i + 1}: ${line.trim()}`);
        }
      });
  }
  return found;
}

const trackedFiles = (pattern: RegExp) =>
  execFileSync('git', ['ls-files'], { encoding: 'utf8' })
    .split('\n')
    .filter((f) => pattern.test(f) && !f.includes('/dist/') && fs.existsSync(f));

describe('comments and docs cite only what the repository holds', () => {
  it('code and comments: no outside documents or their section numbers, no issue numbers', () => {
    const found = outsideCitations(trackedFiles(SOURCE));
    expect(found, found.join('\n')).to.deep.equal([]);
  });

  it('Markdown (README, docs, ADRs): no outside documents or their section numbers, no issue numbers', () => {
    const files = trackedFiles(MARKDOWN);
    expect(files, 'the docs are found').to.include.members(['README.md', 'docs/compatibility.md', 'docs/adr/README.md']);
    const found = outsideCitations(files);
    expect(found, found.join('\n')).to.deep.equal([]);
  });
});
