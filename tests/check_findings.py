#!/usr/bin/env python3
"""Compare a `syncsight report --format json` report with an expect file.

Usage: check_findings.py REPORT.json EXPECT_FILE [--name NAME] [--no-native-sites]

Expect file format (documented in docs/testing.md), one directive a line,
'#' starts a comment:

    <rule-id> <count>          count: N, >=N, <=N, or 'any' (not checked)
    site <rule-id> <file>      some finding of the rule points at a line of
                               <file> marked with the comment EXPECT-SITE <rule-id>
    site <rule-id> <file>:<L>[,<L>...]
                               some finding of the rule points at one of these lines
    cost <rule-id> >=<ms>      the rule's findings cost at least <ms> in total
    nosite <rule-id> <file>    no finding of the rule points at a line of <file>
                               marked with the comment EXPECT-NOSITE <rule-id>
    nosite <rule-id> <file>:<L>[,<L>...]
                               no finding of the rule points at any of these lines
    severity <rule-id> <error|warning|info>
                               every finding of the rule has this severity
    severity <rule-id> <error|warning|info> <text>
                               the rule's findings whose message contains <text>
                               have this severity, and there is at least one
    message <rule-id> <text>   some finding of the rule has a message containing
                               <text> (the rest of the line, inner spaces kept)
    nomessage <text>           no finding (of any rule) has a message containing <text>
    phase <rule-id> <steady|setup>
                               every finding of the rule has this "phase" (the
                               setup / steady-state split of the run); a finding
                               of a process in which no repeated iteration was
                               found (its trace's "iterations" is null: every
                               finding is "steady" there) is not judged
    steady-only                the other directives look at steady-state findings
                               only; every setup finding must be folded (severity
                               info): nothing at warning or above from setup
    sampled <yes|no>           the report says the trace was recorded sampled
                               (some "capture" object with "sampled": true,
                               docs/sampling.md) or not
    occurrences <rule-id> <file>[:<L>,...] <count>
                               the rule's findings at these lines (or the lines of
                               <file> marked EXPECT-SITE <rule-id>) fold <count>
                               occurrences in all (each finding's "count", 1 if absent)

Every rule id not given a count must have no finding; site, nosite, cost,
severity and message need the rule's count line.  The severity is read from
the finding's "severity" member, the message from "message".  <file> is relative to
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
    "incomplete-sync",
    "event-timing-gap",
    "relies-on-legacy-sync",
    "hw-queue-aliasing",
    "first-launch-stall",
    "launch-blocking",
)
SEVERITIES = ("error", "warning", "info")
PHASES = ("steady", "setup")
RULE_KEYS = ("rule", "rule_id", "ruleId", "id")
COST_KEYS = ("cost_ms", "cost", "costMs")
SEVERITY_KEYS = ("severity", "level")
MESSAGE_KEYS = ("message", "msg")


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


def marked_lines(path, rule, marker_word="EXPECT-SITE"):
    marker = re.compile(re.escape(marker_word) + r"\s+" + re.escape(rule) + r"(?![\w-])")
    try:
        with open(path, encoding="utf-8") as f:
            return [i for i, line in enumerate(f, 1) if marker.search(line)]
    except OSError as e:
        raise ExpectError(f"cannot read source {path}: {e.strerror}")


class Expect:
    """What an expect file asks for."""

    def __init__(self):
        self.counts = {}      # rule -> count spec
        self.sites = []       # (rule, basename, lines, text)
        self.nosites = []     # (rule, basename, lines, text)
        self.costs = []       # (rule, ms)
        self.severities = []  # (rule, severity, message text or None)
        self.messages = []    # (rule, text)
        self.nomessages = []  # text
        self.phases = []      # (rule, phase)
        self.steady_only = False
        self.occurrences = [] # (rule, basename, lines, text, count spec)
        self.sampled = None   # True / False: the report must (not) say the trace was sampled


def parse_site(words, where, base_dir, marker_word):
    """'site'/'nosite' <rule> <file>[:<L>,...] -> (rule, basename, lines, text)."""
    rule = words[1]
    m = re.fullmatch(r"(.+?):(\d+(?:,\d+)*)", words[2])
    if m:
        lines = [int(v) for v in m.group(2).split(",")]
        return (rule, os.path.basename(m.group(1)), lines, words[2])
    lines = marked_lines(os.path.join(base_dir, words[2]), rule, marker_word)
    if not lines:
        raise ExpectError(f"{where}: {words[2]} has no line marked {marker_word} {rule}")
    return (rule, os.path.basename(words[2]), lines, words[2])


def parse_expect(path):
    """Returns an Expect."""
    e = Expect()
    base_dir = os.path.dirname(os.path.abspath(path))
    with open(path, encoding="utf-8") as f:
        for number, raw in enumerate(f, 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            where = f"{path}:{number}"
            words = line.split()
            if words == ["steady-only"]:
                e.steady_only = True
                continue
            if words[0] == "sampled":
                if len(words) != 2 or words[1] not in ("yes", "no"):
                    raise ExpectError(f"{where}: want 'sampled <yes|no>'")
                e.sampled = words[1] == "yes"
                continue
            if words[0] == "phase":
                if len(words) != 3 or words[1] not in RULES or words[2] not in PHASES:
                    raise ExpectError(f"{where}: want 'phase <rule-id> <steady|setup>'")
                e.phases.append((words[1], words[2]))
                continue
            if words[0] == "nomessage":
                text = line.split(None, 1)[1].strip() if len(words) > 1 else ""
                if not text:
                    raise ExpectError(f"{where}: want 'nomessage <text>'")
                e.nomessages.append(text)
                continue
            if words[0] == "message":
                parts = line.split(None, 2)
                if len(parts) != 3:
                    raise ExpectError(f"{where}: want 'message <rule-id> <text>'")
                if parts[1] not in RULES:
                    raise ExpectError(f"{where}: unknown rule id '{parts[1]}'")
                e.messages.append((parts[1], parts[2].strip()))
                continue
            if words[0] == "occurrences":
                if len(words) != 4:
                    raise ExpectError(f"{where}: want 'occurrences <rule-id> <file>[:<L>,...] <count>'")
                if words[1] not in RULES:
                    raise ExpectError(f"{where}: unknown rule id '{words[1]}'")
                site = parse_site(words[:3], where, base_dir, "EXPECT-SITE")
                e.occurrences.append(site + (parse_count(words[3], where),))
                continue
            if words[0] == "severity" and len(words) > 3:
                parts = line.split(None, 3)
                if parts[1] not in RULES:
                    raise ExpectError(f"{where}: unknown rule id '{parts[1]}'")
                if parts[2] not in SEVERITIES:
                    raise ExpectError(f"{where}: severity wants one of {', '.join(SEVERITIES)}")
                e.severities.append((parts[1], parts[2], parts[3].strip()))
                continue
            if words[0] in ("site", "nosite", "cost", "severity"):
                if len(words) != 3:
                    raise ExpectError(f"{where}: want '{words[0]} <rule-id> <value>'")
                rule = words[1]
                if rule not in RULES:
                    raise ExpectError(f"{where}: unknown rule id '{rule}'")
                if words[0] == "cost":
                    m = re.fullmatch(r">=(\d+(?:\.\d+)?)", words[2])
                    if not m:
                        raise ExpectError(f"{where}: cost wants '>=MS'")
                    e.costs.append((rule, float(m.group(1))))
                elif words[0] == "severity":
                    if words[2] not in SEVERITIES:
                        raise ExpectError(f"{where}: severity wants one of {', '.join(SEVERITIES)}")
                    e.severities.append((rule, words[2], None))
                elif words[0] == "site":
                    e.sites.append(parse_site(words, where, base_dir, "EXPECT-SITE"))
                else:
                    e.nosites.append(parse_site(words, where, base_dir, "EXPECT-NOSITE"))
                continue
            if len(words) != 2:
                raise ExpectError(f"{where}: want '<rule-id> <count>'")
            if words[0] not in RULES:
                raise ExpectError(f"{where}: unknown rule id '{words[0]}'")
            e.counts[words[0]] = parse_count(words[1], where)
    for rule, *_ in e.sites + e.nosites + e.costs + e.severities + e.messages + e.phases + e.occurrences:
        if rule not in e.counts:
            raise ExpectError(f"{path}: site/nosite/cost/severity/message given for {rule} but no count line")
    return e


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


def text_of(finding, keys):
    for key in keys:
        value = finding.get(key)
        if isinstance(value, str):
            return value
    return None


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


def report_sampled(report):
    """True when some "capture" object of the report says "sampled": true."""
    stack = [report]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            cap = node.get("capture")
            if isinstance(cap, dict) and cap.get("sampled") is True:
                return True
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False


def processes_without_iterations(report):
    """The pids of the report's traces in which no repeated iteration was found
    ("iterations": null): there every finding is "steady" by definition
    (docs/report-format.md), so a phase says nothing of it."""
    pids = set()
    traces = report.get("traces") if isinstance(report, dict) else None
    for t in traces if isinstance(traces, list) else []:
        if isinstance(t, dict) and "iterations" in t and t["iterations"] is None and "pid" in t:
            pids.add(t["pid"])
    return pids


def check(report, e, native_sites=True):
    """Returns a list of human-readable problems (empty when the report matches
    the Expect e).  native_sites=False skips the site/nosite directives of
    compiled sources (an analyzer built without libdw cannot resolve them;
    Python sites still count)."""
    findings, ok = find_findings(report)
    if not ok:
        return ["the report has no 'findings' list (is it `syncsight report --format json` output?)"]
    by_rule = {}
    problems = []
    if e.sampled is not None and report_sampled(report) != e.sampled:
        problems.append("the report says the trace was " + ("not " if e.sampled else "") + "sampled; expected "
                        + ("sampled" if e.sampled else "a full recording"))
    if e.steady_only:
        steady = []
        for finding in findings:
            if finding.get("phase") != "setup":
                steady.append(finding)
                continue
            sev = text_of(finding, SEVERITY_KEYS)
            if sev != "info":
                problems.append(f"{rule_of(finding)}: a setup finding at {sev} (steady-only: setup findings are "
                                f"folded, info); at {', '.join(sorted(f'{b}:{l}' for b, l in sites_of(finding))[:3])}")
        findings = steady
    for finding in findings:
        rule = rule_of(finding)
        if rule is None:
            problems.append(f"finding without a rule id: {json.dumps(finding)[:200]}")
            continue
        by_rule.setdefault(rule, []).append(finding)
    for rule in sorted(set(by_rule) - set(RULES)):
        problems.append(f"unknown rule id '{rule}' in the report ({len(by_rule[rule])} findings)")
    for rule in RULES:
        spec = e.counts.get(rule, ("==", 0))
        got = len(by_rule.get(rule, []))
        if not count_ok(spec, got):
            detail = ""
            if got:
                detail = "; reported at " + ", ".join(
                    sorted({f"{b}:{l}" for f in by_rule[rule] for b, l in sites_of(f)})[:8] or ["(no site)"])
            problems.append(f"{rule}: expected {count_text(spec)}, got {got}{detail}")
    def native(basename):
        return not native_sites and not basename.endswith(".py")
    for rule, basename, lines, text in e.sites:
        if native(basename):
            continue
        reported = set()
        for f in by_rule.get(rule, []):
            reported |= sites_of(f)
        if not any((basename, line) in reported for line in lines):
            want = ", ".join(f"{basename}:{line}" for line in lines)
            seen = ", ".join(sorted(f"{b}:{l}" for b, l in reported)[:8]) or "none"
            problems.append(f"{rule}: no finding at {want} (from 'site {rule} {text}'); sites reported: {seen}")
    for rule, basename, lines, text in e.nosites:
        if native(basename):
            continue
        hits = sorted({f"{b}:{l}" for f in by_rule.get(rule, []) for b, l in sites_of(f)
                       if b == basename and l in lines})
        if hits:
            problems.append(f"{rule}: a finding points at {', '.join(hits)} (from 'nosite {rule} {text}')")
    for rule, basename, lines, text, spec in e.occurrences:
        if native(basename):
            continue
        got = 0
        for f in by_rule.get(rule, []):
            if any(b == basename and l in lines for b, l in sites_of(f)):
                n = f.get("count", 1) if isinstance(f, dict) else 1
                got += n if isinstance(n, int) else 1
        if not count_ok(spec, got):
            problems.append(f"{rule}: expected {count_text(spec)} occurrences at {text}, got {got}")
    for rule, minimum in e.costs:
        total = sum(cost_of(f) for f in by_rule.get(rule, []))
        if total < minimum:
            problems.append(f"{rule}: expected a cost of at least {minimum:g} ms, got {total:.3f} ms")
    for rule, want, text in e.severities:
        chosen = [f for f in by_rule.get(rule, []) if text is None or text in (text_of(f, MESSAGE_KEYS) or "")]
        if text is not None and not chosen:
            problems.append(f"{rule}: expected a finding at {want} whose message contains {text!r}, found none")
        for f in chosen:
            got = text_of(f, SEVERITY_KEYS)
            if got != want:
                problems.append(f"{rule}: expected severity {want}, a finding has {got or 'none'}"
                                f" (at {', '.join(sorted(f'{b}:{l}' for b, l in sites_of(f))[:3]) or 'no site'})")
    for rule, text in e.messages:
        msgs = [text_of(f, MESSAGE_KEYS) or "" for f in by_rule.get(rule, [])]
        if not any(text in m for m in msgs):
            shown = "; ".join(repr(m[:160]) for m in msgs[:3]) or "no finding"
            problems.append(f"{rule}: no message contains {text!r} (messages: {shown})")
    no_split = processes_without_iterations(report)
    for rule, want in e.phases:
        for f in by_rule.get(rule, []):
            if f.get("process") in no_split:
                continue   # no setup / steady split in its process: nothing to judge
            got = f.get("phase")
            if got != want:
                problems.append(f"{rule}: expected phase {want}, a finding has {got or 'none'}"
                                f" (at {', '.join(sorted(f'{b}:{l}' for b, l in sites_of(f))[:3]) or 'no site'})")
    for text in e.nomessages:
        for f in findings:
            m = text_of(f, MESSAGE_KEYS) or ""
            if text in m:
                problems.append(f"{rule_of(f)}: message contains {text!r} (from 'nomessage'): {m[:240]!r}")
    return problems


def for_fixture(expect_path):
    base_dir = os.path.dirname(os.path.abspath(expect_path))
    out = []
    with open(expect_path, encoding="utf-8") as f:
        for raw in f:
            words = raw.split("#", 1)[0].split()
            if len(words) == 4 and words[0] == "occurrences" and not re.search(r":\d", words[2]):
                lines = marked_lines(os.path.join(base_dir, words[2]), words[1], "EXPECT-SITE")
                if not lines:
                    raise ExpectError(f"{expect_path}: {words[2]} has no line marked EXPECT-SITE {words[1]}")
                out.append(f"occurrences {words[1]} {os.path.basename(words[2])}:{','.join(map(str, lines))} {words[3]}\n")
                continue
            if len(words) == 3 and words[0] in ("site", "nosite") and not re.search(r":\d", words[2]):
                # Marker-based sites become explicit line lists: the fixture is
                # checked without the source.  Native sites resolve on the CPU
                # through the debug files in tests/fixtures/bin/
                # (SYNCSIGHT_SYMBOL_PATH, set by tests/test_fixtures.sh).
                marker = "EXPECT-SITE" if words[0] == "site" else "EXPECT-NOSITE"
                lines = marked_lines(os.path.join(base_dir, words[2]), words[1], marker)
                if not lines:
                    raise ExpectError(f"{expect_path}: {words[2]} has no line marked {marker} {words[1]}")
                out.append(f"{words[0]} {words[1]} {os.path.basename(words[2])}:{','.join(map(str, lines))}\n")
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
    native_sites = True
    if "--no-native-sites" in args:
        native_sites = False
        args.remove("--no-native-sites")
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
        expect = parse_expect(expect_path)
    except (ExpectError, OSError) as e:
        print(f"check_findings: {name}: {e}", file=sys.stderr)
        return 2
    try:
        with open(report_path, encoding="utf-8") as f:
            report = json.load(f)
    except (OSError, ValueError) as e:
        print(f"check_findings: {name}: cannot read report {report_path}: {e}", file=sys.stderr)
        return 2
    problems = check(report, expect, native_sites)
    if problems:
        print(f"{name}: report does not match {expect_path}:")
        for p in problems:
            print(f"  - {p}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
