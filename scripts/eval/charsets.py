#!/usr/bin/env python3
"""Evaluates `neardup decode` against the charset test corpora.

Usage: scripts/eval/charsets.py DATA_DIR [--neardup PATH] [--verbose]

DATA_DIR holds data/neardup/legacy-charset-html and data/neardup/chardet-multiencoding (or is
the data/neardup folder itself). Two checks:

1. legacy-charset-html: every page is decoded (with its http_content_type, when given); it passes
   when every expected snippet is in the text and the charset agrees with true_encoding up to
   WHATWG aliases and supersets. Results per status.
2. chardet-multiencoding: every member marked identical_text_to_first must decode to the text of
   its group's first member, after neutralising the encoding labels as that corpus's README does
   (the XML declaration's encoding value and chardet's "Expect:" line).

Python standard library only; exit status 0 when everything passes, 1 otherwise.
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys

# true_encoding (Python codec names) -> the charsets decode may rightly report for it.
ACCEPTED = {
    'utf-8': {'utf-8'}, 'utf-8-sig': {'utf-8'},
    'utf-16': {'utf-16le', 'utf-16be'}, 'utf-16-le': {'utf-16le'}, 'utf-16-be': {'utf-16be'},
    'utf-32': {'utf-32le', 'utf-32be'}, 'utf-32-le': {'utf-32le'}, 'utf-32-be': {'utf-32be'},
    'gbk': {'gbk', 'gb18030'}, 'gb2312': {'gbk', 'gb18030'}, 'gb18030': {'gb18030', 'gbk'},
    'big5': {'big5'}, 'big5hkscs': {'big5'},
    'shift_jis': {'shift_jis'}, 'cp932': {'shift_jis'}, 'euc_jp': {'euc-jp'},
    'iso2022_jp': {'iso-2022-jp'}, 'iso2022_kr': {'iso-2022-kr'},
    'euc_kr': {'euc-kr'}, 'cp949': {'euc-kr'},
    'cp1250': {'windows-1250'}, 'cp1251': {'windows-1251'}, 'cp1252': {'windows-1252'},
    'cp1253': {'windows-1253'}, 'cp1255': {'windows-1255', 'iso-8859-8'},
    'cp1256': {'windows-1256'},
    'iso8859-1': {'windows-1252'}, 'latin-1': {'windows-1252'},
    'iso8859-15': {'iso-8859-15', 'windows-1252'}, 'iso8859-2': {'iso-8859-2'},
    'iso8859-5': {'iso-8859-5'}, 'iso8859-6': {'iso-8859-6'}, 'iso8859-7': {'iso-8859-7'},
    'iso8859-8': {'iso-8859-8', 'windows-1255'},
    'koi8-r': {'koi8-r', 'koi8-u'}, 'cp866': {'ibm866'}, 'cp855': {'ibm855'},
    'mac-cyrillic': {'x-mac-cyrillic'},
}

XMLDECL = re.compile(r'^\ufeff?<\?xml[^>]*?encoding\s*=\s*["\']([^"\']+)["\']')
EXPECT = re.compile(r'(<!--[ \t]*\r?\nSource:[^\n]*\n)(Expect:[ \t]*)([^\s]+)')


def normalize(text):
    """The chardet-multiencoding README's label neutralisation, verbatim."""
    m = XMLDECL.match(text)
    if not m:
        return text
    t = text[:m.start(1)] + '<ENC>' + text[m.end(1):]
    mm = EXPECT.search(t, 0, 2000)
    if mm:
        t = t[:mm.start(3)] + '<ENC>' + t[mm.end(3):]
    return t


def run_decode(neardup, paths, content_type=None):
    """Runs `neardup decode` once; returns {path: result object}."""
    command = [neardup, 'decode']
    if content_type:
        command += ['--content-type', content_type]
    out = subprocess.run(command + paths, check=True, capture_output=True).stdout
    results = {}
    for line in out.decode('utf-8').splitlines():
        obj = json.loads(line)
        results[obj['file']] = obj
    return results


def run_fingerprint(neardup, paths):
    """Runs `neardup fingerprint` once; returns {path: result object}."""
    out = subprocess.run([neardup, 'fingerprint'] + paths, check=True, capture_output=True).stdout
    return {obj['file']: obj for obj in map(json.loads, out.decode('utf-8').splitlines())}


def find_dir(data_root, name):
    for candidate in (os.path.join(data_root, 'data', 'neardup', name), os.path.join(data_root, name)):
        if os.path.isdir(candidate):
            return candidate
    sys.exit(f'charsets.py: {name} not found under {data_root}')


def eval_legacy(neardup, folder, verbose):
    rows = [json.loads(line) for line in open(os.path.join(folder, 'charset-manifest.jsonl'),
                                              encoding='utf-8')]
    plain = [os.path.join(folder, r['path']) for r in rows if not r['http_content_type']]
    results = run_decode(neardup, plain) if plain else {}
    for r in rows:  # --content-type applies to every file of a call: one call per such page
        if r['http_content_type']:
            results.update(run_decode(neardup, [os.path.join(folder, r['path'])],
                                      r['http_content_type']))
    per_status = collections.defaultdict(lambda: [0, 0])
    failures = []
    for r in rows:
        got = results[os.path.join(folder, r['path'])]
        text = got.get('text', '')
        missing = [s for s in r['expected_snippets'] if s not in text]
        charset_ok = got.get('charset') in ACCEPTED.get(r['true_encoding'], {r['true_encoding']})
        ok = got.get('status') == 'decoded' and not missing and charset_ok
        per_status[r['status']][0] += ok
        per_status[r['status']][1] += 1
        if not ok or verbose:
            failures.append(f"  {'ok  ' if ok else 'FAIL'} {r['path']}: true {r['true_encoding']}, "
                            f"got {got.get('charset')} ({got.get('charset_source')})"
                            + (f", missing {missing}" if missing else ''))
    print('legacy-charset-html: pages passing (snippets present and charset right)')
    total = [0, 0]
    for status, (ok, n) in sorted(per_status.items()):
        print(f'  {status:38} {ok:3} / {n}')
        total[0] += ok
        total[1] += n
    print(f"  {'all':38} {total[0]:3} / {total[1]}")
    print('\n'.join(failures))
    return total[0] == total[1]


def eval_groups(neardup, folder, verbose):
    rows = [json.loads(line) for line in open(os.path.join(folder, 'cross-encoding-groups.jsonl'),
                                              encoding='utf-8')]
    results = run_decode(neardup, [os.path.join(folder, r['path']) for r in rows])
    text = {r['path']: normalize(results[os.path.join(folder, r['path'])].get('text', ''))
            for r in rows}
    first = {r['group']: r['path'] for r in rows if r['first']}
    russian = {'windows-1251-russian', 'KOI8-R', 'iso-8859-5-russian', 'IBM866', 'IBM855',
               'MacCyrillic'}
    counts = collections.Counter()
    lines = []
    for r in rows:
        if r['first'] or not r['identical_text_to_first']:
            continue
        folder_name = r['path'].split('/')[1]
        subset = ('russian name groups' if folder_name in russian and not r['group'].startswith(
            ('ude-', 'chromium-')) else 'other groups')
        ok = text[r['path']] == text[first[r['group']]]
        counts[subset, ok] += 1
        got = results[os.path.join(folder, r['path'])]
        if not ok or verbose:
            lines.append(f"  {'ok  ' if ok else 'FAIL'} {r['path']} ({r['encoding']}): got "
                         f"{got.get('charset')} ({got.get('charset_source')})")
    print('chardet-multiencoding: non-first members identical to their first member')
    for subset in ('russian name groups', 'other groups'):
        ok, n = counts[subset, True], counts[subset, True] + counts[subset, False]
        print(f'  {subset:38} {ok:3} / {n}')
    ok = counts['russian name groups', True] + counts['other groups', True]
    n = sum(counts.values())
    print(f"  {'all':38} {ok:3} / {n}")
    print('\n'.join(lines))

    # The same text must give the same fingerprint: the whole pipeline, not only decode.
    prints = run_fingerprint(neardup, [os.path.join(folder, r['path']) for r in rows])
    fp = {r['path']: prints[os.path.join(folder, r['path'])] for r in rows}
    same = collections.Counter()
    for r in rows:
        if r['first'] or not r['identical_text_to_first']:
            continue
        a, b = fp[r['path']], fp[first[r['group']]]
        if a['status'] == 'skipped' and b['status'] == 'skipped' and a['reason'] == b['reason']:
            same['skipped alike'] += 1  # e.g. both too short: the same outcome, no fingerprint
            continue
        equal = a['status'] == 'fingerprinted' and a.get('fingerprint') == b.get('fingerprint')
        same[equal] += 1
        if not equal:
            print(f"  FAIL fingerprint {r['path']}: {a.get('fingerprint') or a.get('reason')} vs "
                  f"{b.get('fingerprint') or b.get('reason')}")
    print('chardet-multiencoding: non-first members with exactly the first member\'s fingerprint')
    print(f"  {'fingerprinted, equal':38} {same[True]:3} / {same[True] + same[False]}")
    print(f"  {'both skipped for the same reason':38} {same['skipped alike']:3}")
    return ok == n and same[False] == 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('data_dir')
    parser.add_argument('--neardup', default='build/cli/neardup', help='the neardup binary')
    parser.add_argument('--verbose', action='store_true', help='list passing cases too')
    args = parser.parse_args()
    legacy = eval_legacy(args.neardup, find_dir(args.data_dir, 'legacy-charset-html'),
                         args.verbose)
    print()
    groups = eval_groups(args.neardup, find_dir(args.data_dir, 'chardet-multiencoding'),
                         args.verbose)
    return 0 if legacy and groups else 1


if __name__ == '__main__':
    sys.exit(main())
