#!/usr/bin/env python3
"""Compare a `syncsight report --format json` report with an expect file.

Usage: check_findings.py REPORT.json EXPECT_FILE [--name NAME]

Expect file format (documented in docs/testing.md), one directive a line,
'#' starts a comment:

    <rule-id> <count>          count: N, >=N, <=N, or 'any' (not checked)
    site <rule-id> <file>      some finding of the rule points at a line of
                               <file> marked with the comment EXPECT-SITE <rule-id>
    site <rule-id> <file>:<L>[,<L>...]
                               some finding of the rule points at one of these lines
    cost <rule-id> >=<ms>      the rule's findings cost at least <ms> in total

Every rule id not given a count must have no finding.  <file> is relative to
the expect file's directory.  Exit status: 0 match, 1 mismatch, 2 unusable
input.  Python standard library only.

check_findings.py --for-fixture EXPECT_FILE prints the expect file for a
fixture trace (tests/fixtures/): marker-based sites of Python scripts become
explicit line lists (the trace names the script and line itself); native
programs' sites likewise, resolved on the CPU through the debug files
committed in tests/fixtures/bin/ (objcopy --only-keep-debug of the recorded
binaries; tests/test_fixtures.sh points SYNCSIGHT_SYMBOL_PATH at them).
"""
import json
import os
import re
import sys

RULES = (
    "implicit-sync",
    "pageable-async-copy",
    "legacy-stream-serialization",
    "device-sync-overuse",
    "missing-fence",
    "unrecorded-event-wait",
)
RULE_KEYS = ("rule", "rule_id", "ruleId", "id")
COST_KEYS = ("cost_ms", "cost", "costMs")


class ExpectError(Exception):
    pass


def parse_count(text, where):
    m = re.fullmatch(r"(>=|<=)?(\d+)|any", text)
    if not m:
        raise ExpectError(f"{where}: bad count '{text}' (want N, >=N, <=N or any)")
    if text == "any":
        return ("any", 0)
    return (m.group(1) or "==", int(m.group(2)))


def count_ok(spec, n):
    op, value = spec
    return {"any": True, "==": n == value, ">=": n >= value, "<=": n <= value}[op]


def count_text(spec):
    op, value = spec
    return "any" if op == "any" else ("" if op == "==" else op) + str(value)


def marked_lines(path, rule):
    marker = re.compile(r"EXPECT-SITE\s+" + re.escape(rule) + r"(?![\w-])")
    try:
        with open(path, encoding="utf-8") as f:
            return [i for i, line in enumerate(f, 1) if marker.search(line)]
    except OSError as e:
        raise ExpectError(f"cannot read source {path}: {e.strerror}")


def parse_expect(path):
    """Returns (counts{rule: spec}, sites[(rule, basename, lines, text)], costs[(rule, ms)])."""
    counts, sites, costs = {}, [], []
    base_dir = os.path.dirname(os.path.abspath(path))
    with open(path, encoding="utf-8") as f:
        for number, raw in enumerate(f, 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            where = f"{path}:{number}"
            words = line.split()
            if words[0] in ("site", "cost"):
                if len(words) != 3:
                    raise ExpectError(f"{where}: want '{words[0]} <rule-id> <value>'")
                rule = words[1]
                if rule not in RULES:
                    raise ExpectError(f"{where}: unknown rule id '{rule}'")
                if words[0] == "cost":
                    m = re.fullmatch(r">=(\d+(?:\.\d+)?)", words[2])
                    if not m:
                        raise ExpectError(f"{where}: cost wants '>=MS'")
                    costs.append((rule, float(m.group(1))))
                    continue
                m = re.fullmatch(r"(.+?):(\d+(?:,\d+)*)", words[2])
                if m:
                    lines = [int(v) for v in m.group(2).split(",")]
                    sites.append((rule, os.path.basename(m.group(1)), lines, words[2]))
                else:
                    lines = marked_lines(os.path.join(base_dir, words[2]), rule)
                    if not lines:
                        raise ExpectError(f"{where}: {words[2]} has no line marked EXPECT-SITE {rule}")
                    sites.append((rule, os.path.basename(words[2]), lines, words[2]))
                continue
            if len(words) != 2:
                raise ExpectError(f"{where}: want '<rule-id> <count>'")
            if words[0] not in RULES:
                raise ExpectError(f"{where}: unknown rule id '{words[0]}'")
            counts[words[0]] = parse_count(words[1], where)
    for rule, *_ in sites + costs:
        if rule not in counts:
            raise ExpectError(f"{path}: site/cost given for {rule} but no count line")
    return counts, sites, costs


def find_findings(report):
    """The report's findings: every list stored under a key 'findings' anywhere
    in the document (one per process when a run traced several), or the
    document itself when it is a list."""
    found, seen_key = [], False

    def walk(node):
        nonlocal seen_key
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "findings" and isinstance(value, list):
                    seen_key = True
                    found.extend(v for v in value if isinstance(v, dict))
                else:
                    walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(report)
    if not seen_key and isinstance(report, list):
        return [v for v in report if isinstance(v, dict)], True
    return found, seen_key


def rule_of(finding):
    for key in RULE_KEYS:
        value = finding.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def cost_of(finding):
    for key in COST_KEYS:
        value = finding.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    return 0.0


def sites_of(finding):
    """All (basename, line) pairs a finding mentions: 'file:line' inside any
    string, or objects with 'file' and 'line' members, at any depth."""
    pairs = set()
    pattern = re.compile(r"([^\s:'\"()\[\]]+):(\d+)")

    def walk(node):
        if isinstance(node, dict):
            file, line = node.get("file"), node.get("line")
            if isinstance(file, str) and isinstance(line, int):
                pairs.add((os.path.basename(file), line))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)
        elif isinstance(node, str):
            for m in pattern.finditer(node):
                pairs.add((os.path.basename(m.group(1)), int(m.group(2))))

    walk(finding)
    return pairs


def check(report, counts, sites, costs):
    """Returns a list of human-readable problems (empty when the report matches)."""
    findings, ok = find_findings(report)
    if not ok:
        return ["the report has no 'findings' list (is it `syncsight report --format json` output?)"]
    by_rule = {}
    problems = []
    for finding in findings:
        rule = rule_of(finding)
        if rule is None:
            problems.append(f"finding without a rule id: {json.dumps(finding)[:200]}")
            continue
        by_rule.setdefault(rule, []).append(finding)
    for rule in sorted(set(by_rule) - set(RULES)):
        problems.append(f"unknown rule id '{rule}' in the report ({len(by_rule[rule])} findings)")
    for rule in RULES:
        spec = counts.get(rule, ("==", 0))
        got = len(by_rule.get(rule, []))
        if not count_ok(spec, got):
            detail = ""
            if got:
                detail = "; reported at " + ", ".join(
                    sorted({f"{b}:{l}" for f in by_rule[rule] for b, l in sites_of(f)})[:8] or ["(no site)"])
            problems.append(f"{rule}: expected {count_text(spec)}, got {got}{detail}")
    for rule, basename, lines, text in sites:
        reported = set()
        for f in by_rule.get(rule, []):
            reported |= sites_of(f)
        if not any((basename, line) in reported for line in lines):
            want = ", ".join(f"{basename}:{line}" for line in lines)
            seen = ", ".join(sorted(f"{b}:{l}" for b, l in reported)[:8]) or "none"
            problems.append(f"{rule}: no finding at {want} (from 'site {rule} {text}'); sites reported: {seen}")
    for rule, minimum in costs:
        total = sum(cost_of(f) for f in by_rule.get(rule, []))
        if total < minimum:
            problems.append(f"{rule}: expected a cost of at least {minimum:g} ms, got {total:.3f} ms")
    return problems


def for_fixture(expect_path):
    base_dir = os.path.dirname(os.path.abspath(expect_path))
    out = []
    with open(expect_path, encoding="utf-8") as f:
        for raw in f:
            words = raw.split("#", 1)[0].split()
            if len(words) == 3 and words[0] == "site" and not re.search(r":\d", words[2]):
                # Marker-based sites become explicit line lists: the fixture is
                # checked without the source.  Native sites resolve on the CPU
                # through the debug files in tests/fixtures/bin/
                # (SYNCSIGHT_SYMBOL_PATH, set by tests/test_fixtures.sh).
                lines = marked_lines(os.path.join(base_dir, words[2]), words[1])
                out.append(f"site {words[1]} {os.path.basename(words[2])}:{','.join(map(str, lines))}\n")
                continue
            out.append(raw if raw.endswith("\n") else raw + "\n")
    sys.stdout.write("".join(out))
    return 0


def main(argv):
    args = argv[1:]
    if len(args) == 2 and args[0] == "--for-fixture":
        try:
            return for_fixture(args[1])
        except (ExpectError, OSError) as e:
            print(f"check_findings: {e}", file=sys.stderr)
            return 2
    name = None
    if "--name" in args:
        i = args.index("--name")
        if i + 1 >= len(args):
            print("check_findings: --name needs a value", file=sys.stderr)
            return 2
        name = args[i + 1]
        del args[i:i + 2]
    if len(args) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    report_path, expect_path = args
    name = name or os.path.basename(expect_path).rsplit(".", 1)[0]
    try:
        counts, sites, costs = parse_expect(expect_path)
    except (ExpectError, OSError) as e:
        print(f"check_findings: {name}: {e}", file=sys.stderr)
        return 2
    try:
        with open(report_path, encoding="utf-8") as f:
            report = json.load(f)
    except (OSError, ValueError) as e:
        print(f"check_findings: {name}: cannot read report {report_path}: {e}", file=sys.stderr)
        return 2
    problems = check(report, counts, sites, costs)
    if problems:
        print(f"{name}: report does not match {expect_path}:")
        for p in problems:
            print(f"  - {p}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
