#!/usr/bin/env python3
"""Check that the C files of a directory call and include only downward.

    check_layers.py [--gen DIR] [--spec FILE] SRCDIR...

Each SRCDIR holds a layer spec, SRCDIR/LAYERS (or --spec FILE for a single
SRCDIR).  Its format, one layer per line, the bottom layer first:

    # a comment; blank lines are ignored
    base:      base.c base.h
    buffers:   buffers.c buffers.h
    producers: cupti.c nvtx.c gen/ss_api_wrap.c

A line is `layer-name: file file ...`.  A file name is relative to SRCDIR;
one starting with `gen/` is a generated source, found under the --gen folder
(default build/gen), and belongs to the layer whose line names it.  A line
ending in a backslash continues on the next.  Every .c, .h and .cu file of
SRCDIR must be in exactly one layer; a listed generated file must exist (run
the build's generator first).

A file may use what its own layer and the layers below it define, never what
a layer above defines.  Files of one layer may use each other.  Checked:

  - #include "x.h" lines: x.h, looked up next to the including file and in
    SRCDIR, must not be in a higher layer;
  - uses of functions and variables: every non-static function or variable
    that a file of the spec defines and that a file of the spec declares (a
    prototype or an extern, in a header or a .c file) other than its own is
    owned by the file that defines it; a file whose code (function bodies,
    initializers, macro bodies) names it uses it.  A definition that no other
    file of the spec declares replaces a system library's function (an
    interposer such as pthread_mutex_lock or cudaMalloc): its callers reach it
    through the system's header, so it does not count.  A name written after
    `.` or `->` is a member, not a use;
  - circles: the file graph of these uses and includes has no cycle through
    files of different layers.

A lower layer that must reach a higher one does it through a hook the higher
layer registers: a function pointer it stores, called as a member or through
a static variable, neither of which is a use.

The tokenizer is deliberately simple (comments, string and character literals,
preprocessor lines, brace and parenthesis nesting): it reads both branches of
an #if, and a function that a macro expansion defines is not seen as defined.

Exit status 0 when every spec holds; otherwise 1, with one line per
violation naming the two files and the function, variable or include; -v
lists every file-to-file use.  Python 3 standard library only.
"""
import argparse
import os
import re
import sys

EXTENSIONS = (".c", ".h", ".cu")
ATTRIBUTE_WORDS = {"__attribute__", "__attribute", "__asm__", "asm", "__declspec", "_Alignas",
                   "__typeof__", "typeof", "_Static_assert", "sizeof", "_Alignof"}
C_KEYWORDS = {"if", "while", "for", "switch", "return", "do", "else", "case", "goto", "break",
              "continue", "default", "static", "extern", "typedef", "struct", "union", "enum",
              "const", "volatile", "inline", "register", "restrict"}


class Error(Exception):
    pass


class Token:
    __slots__ = ("text", "line")

    def __init__(self, text, line):
        self.text = text
        self.line = line


def strip_comments(text):
    """Comments become spaces (newlines kept); literals stay."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "/" and i + 1 < n and text[i + 1] == "*":
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append("".join("\n" if ch == "\n" else " " for ch in text[i:end]))
            i = end
        elif c == "/" and i + 1 < n and text[i + 1] == "/":
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(" " * (end - i))
            i = end
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


TOKEN_RE = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|[A-Za-z_]\w*|\d[\w.]*|->|##|\S')


def tokenize(text, first_line):
    toks = []
    for lineno, line in enumerate(text.split("\n"), first_line):
        for m in TOKEN_RE.finditer(line):
            t = m.group(0)
            if t[0] in "\"'" or t[0].isdigit():
                t = "<lit>"
            toks.append(Token(t, lineno))
    return toks


class Source:
    """What one file includes, declares, defines and names."""

    def __init__(self, path, name):
        self.path = path
        self.name = name            # as the spec writes it
        self.includes = []          # (header text, line)
        self.defines = {}           # non-static definitions: name -> (line, kind)
        self.declares = set()       # prototypes and extern declarations
        self.uses = []              # (identifier, line) in code and macro bodies
        self.parse()

    def parse(self):
        try:
            with open(self.path, encoding="utf-8", errors="replace") as f:
                text = strip_comments(f.read())
        except OSError as e:
            raise Error("%s: %s" % (self.path, e.strerror))
        code_lines = []
        lines = text.split("\n")
        i = 0
        while i < len(lines):
            lineno = i + 1
            line = lines[i]
            # a preprocessor line with its continuations
            if line.lstrip().startswith("#"):
                logical = line
                while logical.endswith("\\") and i + 1 < len(lines):
                    i += 1
                    logical = logical[:-1] + " " + lines[i]
                    code_lines.append("")
                code_lines.append("")
                self.directive(logical, lineno)
            else:
                code_lines.append(line)
            i += 1
        self.items(tokenize("\n".join(code_lines), 1))

    def directive(self, text, lineno):
        m = re.match(r'\s*#\s*include\s*"([^"]+)"', text)
        if m:
            self.includes.append((m.group(1), lineno))
            return
        m = re.match(r"\s*#\s*define\s+\w+(\([^)]*\))?(.*)$", text)
        if m:
            self.use_tokens(tokenize(m.group(2), lineno))

    def use_tokens(self, toks):
        prev = None
        for t in toks:
            if re.match(r"[A-Za-z_]", t.text) and prev not in (".", "->"):
                self.uses.append((t.text, t.line))
            prev = t.text

    def items(self, toks):
        """Split the file scope into declarations and function definitions."""
        n = len(toks)
        item = []                   # (token, nesting depth inside the item)
        i = 0
        while i < n:
            t = toks[i]
            if t.text == "{" and item and item[-1][0].text == ")" and item[-1][1] == 0:
                end = self.matching(toks, i)
                self.function(item, toks[i + 1:end])
                item = []
                i = end + 1
                continue
            if t.text in "([{":
                end = self.matching(toks, i)
                item.append((t, 0))
                item.extend((x, 1) for x in toks[i + 1:end])
                if end < n:
                    item.append((toks[end], 0))
                i = end + 1
                continue
            if t.text == ";":
                self.declaration(item)
                item = []
            else:
                item.append((t, 0))
            i += 1
        if item:
            self.declaration(item)

    @staticmethod
    def matching(toks, i):
        pairs = {"(": ")", "[": "]", "{": "}"}
        stack = [pairs[toks[i].text]]
        j = i + 1
        while j < len(toks):
            x = toks[j].text
            if x in pairs:
                stack.append(pairs[x])
            elif x in (")", "]", "}"):
                if x == stack[-1]:
                    stack.pop()
                    if not stack:
                        return j
                # an unbalanced closer (both branches of an #if): ignore it
            j += 1
        return len(toks)

    @staticmethod
    def top(item):
        return [(k, t) for k, (t, d) in enumerate(item) if d == 0]

    def function(self, head, body):
        words = [t.text for t, d in head if d == 0]
        # the name: the identifier before the last parenthesized group that
        # is not an attribute
        top = self.top(head)
        name = None
        k = len(top) - 1
        while k >= 0:
            if top[k][1].text != ")":
                break
            # find its "("
            depth, j = 0, k
            while j >= 0:
                x = top[j][1].text
                depth += x == ")"
                depth -= x == "("
                if depth == 0:
                    break
                j -= 1
            before = top[j - 1][1].text if j > 0 else None
            if before in ATTRIBUTE_WORDS:
                k = j - 2
                continue
            name = before
            break
        if name and re.match(r"[A-Za-z_]\w*$", name) and "static" not in words:
            self.defines.setdefault(name, (head[0][0].line, "function"))
        self.use_tokens(body)

    def declaration(self, item):
        if not item:
            return
        words = [t.text for t, d in item if d == 0]
        if "typedef" in words:
            return
        top = self.top(item)
        names, declared = [], []
        inits = []                  # (start, end) item positions of initializers
        in_init = None
        for k, (pos, t) in enumerate(top):
            if in_init is not None:
                if t.text == ",":
                    inits.append((in_init, pos))
                    in_init = None
                continue
            if t.text == "=":
                in_init = pos + 1
                continue
            nxt = top[k + 1][1].text if k + 1 < len(top) else ";"
            if not re.match(r"[A-Za-z_]\w*$", t.text) or t.text in C_KEYWORDS:
                continue
            if nxt == "(" and t.text not in ATTRIBUTE_WORDS:
                declared.append(t.text)             # a prototype
            elif nxt in ("=", ";", ",", "["):
                names.append(t.text)
        if in_init is not None:
            inits.append((in_init, len(item)))
        if "extern" in words:
            self.declares.update(names + declared)
            return
        self.declares.update(declared)
        for a, b in inits:
            self.use_tokens([t for t, d in item[a:b]])
        if "static" not in words:
            for nm in names:
                self.defines.setdefault(nm, (item[0][0].line, "variable"))


def read_spec(path):
    layers = []                     # (layer name, [file names])
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise Error("%s: %s" % (path, e.strerror))
    text = text.replace("\\\n", " ")
    for lineno, raw in enumerate(text.split("\n"), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if ":" not in line:
            raise Error("%s:%d: expected `layer-name: file ...`" % (path, lineno))
        name, files = line.split(":", 1)
        name = name.strip()
        if not re.match(r"[\w.-]+$", name):
            raise Error("%s:%d: bad layer name '%s'" % (path, lineno, name))
        if any(name == n for n, _ in layers):
            raise Error("%s:%d: layer '%s' named twice" % (path, lineno, name))
        layers.append((name, files.split()))
    if not layers:
        raise Error("%s: no layers" % path)
    return layers


def check_dir(srcdir, spec_path, gen_dir, verbose=False):
    """Return a list of violation lines for one directory."""
    layers = read_spec(spec_path)
    problems = []
    layer_of = {}                   # spec file name -> layer index
    paths = {}                      # spec file name -> path on disk
    for idx, (lname, files) in enumerate(layers):
        for f in files:
            if f in layer_of:
                problems.append("%s: %s is in layers '%s' and '%s'" %
                                (spec_path, f, layers[layer_of[f]][0], lname))
                continue
            layer_of[f] = idx
            if f.startswith("gen/"):
                p = os.path.join(gen_dir, f[len("gen/"):])
                if not os.path.isfile(p):
                    raise Error("%s: generated file %s does not exist (build it first)" % (spec_path, p))
            else:
                p = os.path.join(srcdir, f)
                if not os.path.isfile(p):
                    problems.append("%s: %s (layer '%s') does not exist" % (spec_path, p, lname))
                    continue
            paths[f] = p
    for entry in sorted(os.listdir(srcdir)):
        if entry.endswith(EXTENSIONS) and os.path.isfile(os.path.join(srcdir, entry)) \
                and entry not in layer_of:
            problems.append("%s: %s is in no layer of %s" % (srcdir, entry, spec_path))

    sources = {f: Source(p, f) for f, p in paths.items()}
    by_path = {os.path.realpath(p): f for f, p in paths.items()}

    def lname(f):
        return layers[layer_of[f]][0]

    declared_by = {}                # symbol -> files that declare it
    for f, s in sources.items():
        for sym in s.declares:
            declared_by.setdefault(sym, set()).add(f)
    owners = {}                     # symbol -> [defining file]
    for f, s in sources.items():
        for sym in s.defines:
            if declared_by.get(sym, set()) - {f}:
                owners.setdefault(sym, []).append(f)

    edges = {}                      # (from, to) -> first reason
    for f, s in sources.items():
        for inc, line in s.includes:
            for base in (os.path.dirname(s.path), srcdir):
                target = by_path.get(os.path.realpath(os.path.join(base, inc)))
                if target:
                    if target != f:
                        edges.setdefault((f, target), (line, 'includes "%s"' % inc))
                    break
        for sym, line in s.uses:
            for target in owners.get(sym, ()):
                if target != f:
                    kind = sources[target].defines[sym][1]
                    edges.setdefault((f, target), (line, "uses %s%s" % (sym, "()" if kind == "function" else "")))

    for (a, b), (line, what) in sorted(edges.items()):
        if verbose:
            print("%s (%s) -> %s (%s): line %d %s" % (a, lname(a), b, lname(b), line, what))
        if layer_of[b] > layer_of[a]:
            problems.append("%s:%d: %s (layer '%s') %s of %s (layer '%s', higher)" %
                            (paths[a], line, a, lname(a), what, b, lname(b)))

    # circles through more than one layer: strongly connected components
    graph = {f: [] for f in sources}
    for a, b in edges:
        graph[a].append(b)
    for comp in strongly_connected(graph):
        if len({layer_of[f] for f in comp}) > 1:
            members = sorted(comp, key=lambda f: (layer_of[f], f))
            problems.append("%s: circle across layers: %s" %
                            (srcdir, ", ".join("%s (%s)" % (f, lname(f)) for f in members)))
    return problems, len(sources), len(edges)


def strongly_connected(graph):
    """Tarjan's algorithm, iterative."""
    index, low, on_stack, stack, comps = {}, {}, set(), [], []
    counter = [0]
    for root in graph:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, k = work.pop()
            if k == 0:
                index[node] = low[node] = counter[0]
                counter[0] += 1
                stack.append(node)
                on_stack.add(node)
            succ = graph[node]
            if k < len(succ):
                work.append((node, k + 1))
                nxt = succ[k]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            for nxt in succ:
                if nxt in on_stack:
                    low[node] = min(low[node], low[nxt])
            if low[node] == index[node]:
                comp = []
                while True:
                    x = stack.pop()
                    on_stack.discard(x)
                    comp.append(x)
                    if x == node:
                        break
                comps.append(comp)
    return comps


def main():
    ap = argparse.ArgumentParser(description="Check the layer order of C source directories.")
    ap.add_argument("dirs", nargs="+", metavar="SRCDIR")
    ap.add_argument("--gen", default="build/gen", help="folder of the generated sources (gen/...)")
    ap.add_argument("--spec", help="layer spec (default SRCDIR/LAYERS; one SRCDIR only)")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every file-to-file use")
    args = ap.parse_args()
    if args.spec and len(args.dirs) != 1:
        ap.error("--spec takes one SRCDIR")
    failed = False
    for d in args.dirs:
        spec = args.spec or os.path.join(d, "LAYERS")
        try:
            problems, nfiles, nedges = check_dir(d, spec, args.gen, args.verbose)
        except Error as e:
            print("check_layers: %s" % e, file=sys.stderr)
            failed = True
            continue
        for p in problems:
            print(p, file=sys.stderr)
        if problems:
            failed = True
            print("check_layers: %s: %d problem(s)" % (d, len(problems)), file=sys.stderr)
        else:
            print("check_layers: %s: %d files, %d file-to-file uses, all downward or within a layer"
                  % (d, nfiles, nedges))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
