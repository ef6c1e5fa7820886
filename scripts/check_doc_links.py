#!/usr/bin/env python3
"""Checks that every relative link and #anchor in README.md, CHANGELOG.md and docs/*.md resolves.

Usage: python3 scripts/check_doc_links.py [REPO_ROOT]
Anchors are GitHub's heading slugs (lower case, punctuation but `-` and `_` dropped, blanks to `-`, `-1`,
`-2`, ... for repeated headings); links inside code blocks and code spans are not links. Prints each
broken link as `FILE: missing file|anchor TARGET` and exits 1 if there is one, else 0.
"""
import re, sys
from pathlib import Path
root = Path(sys.argv[1] if len(sys.argv) > 1 else '.').resolve()
def slugs(path):
    out = set(); counts = {}
    code = False
    for line in path.read_text(encoding='utf-8').split('\n'):
        if line.startswith('```'): code = not code; continue
        if code: continue
        m = re.match(r'^(#{1,6})\s+(.*?)\s*#*\s*$', line)
        if not m: continue
        s = m.group(2).strip().lower()
        s = re.sub(r'[^\w\- ]', '', s)   # GitHub: drop punctuation but - and _
        s = s.replace(' ', '-')
        n = counts.get(s, 0); counts[s] = n + 1
        out.add(s if n == 0 else f'{s}-{n}')
    return out
files = [root / 'README.md', root / 'CHANGELOG.md'] + sorted((root / 'docs').glob('*.md'))
bad = 0
cache = {}
for f in files:
    if not f.exists(): continue
    text = f.read_text(encoding='utf-8')
    text = re.sub(r'```.*?```', '', text, flags=re.S)
    text = re.sub(r'`[^`\n]*`', '', text)  # inline code: `model.layers[0](x)` is no link
    for m in re.finditer(r'\]\(([^)\s]+)\)', text):
        target = m.group(1)
        if re.match(r'[a-z]+:', target): continue
        path, _, anchor = target.partition('#')
        dest = (f.parent / path).resolve() if path else f
        if not dest.exists():
            print(f'{f.relative_to(root)}: missing file {target}'); bad += 1; continue
        if anchor and dest.suffix == '.md':
            if dest not in cache: cache[dest] = slugs(dest)
            if anchor not in cache[dest]:
                print(f'{f.relative_to(root)}: missing anchor {target}'); bad += 1
print(f'{bad} broken links')
sys.exit(1 if bad else 0)
