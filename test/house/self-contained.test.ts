import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import t from 'tap';

// docs/house-rules.md rule 12: the repository stands on its own. A reader who clones it can open everything it
// refers to: no issue number (the tracker is not the repository), no path outside it, and every relative link in a
// Markdown file opens a file that exists (and, for a link to a heading of a Markdown file, that heading).

const ROOT = resolve(import.meta.dirname, '..', '..');

/** What a reader of the repository cannot open, each with what it names. */
const OUTSIDE: Array<{ what: string; pattern: RegExp }> = [
  { what: 'an issue number', pattern: /\bissues?\s*#?\d+/i },
  {
    what: 'a path outside the repository',
    pattern: /\.\.\/shared\b|\bshared\/(?:spec|design)\b|\/work\/(?:main|wt|shared)\b/,
  },
  {
    what: 'a team note outside the repository',
    // Spelled in pieces, like the samples below, so that this file passes its own check (and a grep of the tree).
    pattern: new RegExp(`\\b${'API'}-${'DECISIONS'}\\b|\\b${'VOICE'}\\.md\\b|\\b${'ARCHI'}TECTURE(?:\\.md| rules?\\b)`),
  },
];

/** Every place in `text` that refers to something outside the repository, as `line N: what ("excerpt")`. */
export function outsideReferences(text: string): string[] {
  const found: string[] = [];
  text.split('\n').forEach((line, index) => {
    for (const { what, pattern } of OUTSIDE) {
      const match = pattern.exec(line);
      if (match) found.push(`line ${index + 1}: ${what} ("${match[0]}")`);
    }
  });
  return found;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
export function headingSlug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[`*_]/g, '')
    .replace(/[^\p{L}\p{N}\s-]/gu, '')
    .replace(/\s/g, '-');
}

function headingsOf(markdown: string): Set<string> {
  const slugs = new Set<string>();
  for (const line of withoutCode(markdown).split('\n')) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading !== undefined) slugs.add(headingSlug(heading));
  }
  return slugs;
}

/** Markdown without fenced code blocks and inline code, where a `](...)` is an example, not a link. */
function withoutCode(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '');
}

/**
 * The relative links of a Markdown file (inline `[text](target)` and reference `[name]: target`) that do not open:
 * a missing file, a file outside `root`, or a `#heading` the target Markdown file does not have.
 */
export function brokenLinks(root: string, file: string, markdown: string): string[] {
  const broken: string[] = [];
  const text = withoutCode(markdown);
  const targets = [
    ...[...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!),
    ...[...text.matchAll(/^\s*\[[^\]]+\]:\s*(\S+)/gm)].map((m) => m[1]!),
  ];
  for (const target of targets) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:, data: ...
    const [pathPart = '', anchor] = target.split('#', 2);
    const path = decodeURIComponent(pathPart.split('?')[0]!);
    const absolute = path === '' ? file : path.startsWith('/') ? join(root, path) : resolve(dirname(file), path);
    const shown = `${relative(root, file)}: ${target}`;
    if (absolute !== root && !absolute.startsWith(root + sep)) {
      broken.push(`${shown} (outside the repository)`);
      continue;
    }
    if (absolute !== file && !existsSync(absolute)) {
      broken.push(`${shown} (no such file)`);
      continue;
    }
    if (anchor !== undefined && anchor !== '' && absolute.endsWith('.md')) {
      const source = absolute === file ? markdown : readFileSync(absolute, 'utf8');
      if (!headingsOf(source).has(anchor.toLowerCase())) broken.push(`${shown} (no such heading)`);
    }
  }
  return broken;
}

function trackedTextFiles(): Array<{ path: string; text: string }> {
  // Tracked files, and new ones not yet added (but not what .gitignore keeps out).
  const listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const paths = [...new Set(listed.split('\0'))].filter(
    (p) =>
      p !== '' && p.split('/')[0] !== 'node_modules' && existsSync(join(ROOT, p)) && statSync(join(ROOT, p)).isFile(),
  );
  const files: Array<{ path: string; text: string }> = [];
  for (const path of paths) {
    const bytes = readFileSync(join(ROOT, path));
    if (bytes.includes(0)) continue; // binary: images, audio
    files.push({ path, text: bytes.toString('utf8') });
  }
  return files;
}

t.test('no file of the repository names an issue number or a path outside the repository', async (t) => {
  const files = trackedTextFiles();
  t.ok(files.length > 200, `read the tracked files (${files.length})`);
  t.ok(
    files.some((f) => f.path === 'README.md'),
    'README.md is among them',
  );
  const offenders: string[] = [];
  for (const { path, text } of files) {
    for (const found of outsideReferences(text)) offenders.push(`${path} ${found}`);
  }
  t.same(offenders, [], 'say the reason itself, or link a document in docs/');
});

t.test('every relative link in a Markdown file opens', async (t) => {
  const markdown = trackedTextFiles().filter((f) => f.path.endsWith('.md'));
  t.ok(
    markdown.some((f) => f.path === 'docs/README.md'),
    'docs/README.md is among them',
  );
  const broken = markdown.flatMap(({ path, text }) => brokenLinks(ROOT, join(ROOT, path), text));
  t.same(broken, [], 'links that do not open');
});

t.test('the checks see what they are for', async (t) => {
  const issue = (n: string) => `${'issue'} ${n}`;
  t.same(outsideReferences(`fixed in ${issue('12')}, item 3`), [`line 1: an issue number ("${issue('12')}")`]);
  t.same(outsideReferences(`see ${'Issue'} #7`), [`line 1: an issue number ("${'Issue'} #7")`]);
  t.equal(outsideReferences(`read ../${'shared'}/spec/api-v1.md`).length, 1, 'a path beside the repository');
  t.equal(outsideReferences(`as ${'API'}-${'DECISIONS'} says`).length, 1);
  t.equal(outsideReferences(`${'ARCHI'}TECTURE rule 7`).length, 1);
  t.same(outsideReferences('uNetworking/uWebSockets#1928; docs/house-rules.md rule 12; 12 issues'), []);
  t.equal(headingSlug('Versioning and deprecation'), 'versioning-and-deprecation');
  t.equal(headingSlug('2. The media socket'), '2-the-media-socket');
  t.equal(headingSlug('Routes outside `/api/v1`'), 'routes-outside-apiv1');

  const file = join(ROOT, 'docs', 'example.md');
  const text = [
    '# Title',
    '[ok](api.md) [ok](api.md#errors) [self](#title) [web](https://example.com) [mail](mailto:a@b.c)',
    '[gone](missing.md) [up](../../outside.md) [anchor](api.md#no-such-heading)',
    '```',
    '[in code](nothing.md)',
    '```',
    '[ref]: ./house-rules.md',
  ].join('\n');
  t.same(brokenLinks(ROOT, file, text), [
    'docs/example.md: missing.md (no such file)',
    'docs/example.md: ../../outside.md (outside the repository)',
    'docs/example.md: api.md#no-such-heading (no such heading)',
  ]);
});
