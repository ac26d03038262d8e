#!/usr/bin/env python3
"""Checks the house rules that the compiler alone cannot see (docs/architecture.md).

1. Layers: core/layers.txt and ui/layers.txt declare each layer (a folder) and
   the layers it may include, as arrows ("model: attention interop"). A file
   includes only from its own layer and from what its layer's arrows reach,
   directly or through other arrows; the arrows themselves form no circle.
   Every folder with sources is a declared layer.
2. No two parts include each other, directly or around a longer circle (a part
   is a header and its .cpp: runner.cpp including python_worker.h while
   python_worker.cpp includes runner.h is a circle).
3. No function in core/, ui/ or app/ is longer than --max-function-lines (80):
   free functions, member functions defined inside a class body, and lambdas
   outside a function, counted from the first line of their signature to
   their closing brace.
4. ui/models/ includes no Qt Widgets or QCustomPlot header (it is a library
   of data for the views, tested without widgets).
5. A docs/*.md page that a layer listing or CMake file of core/ or ui/ names
   exists.

Prints every finding with its file and line and exits 1 when there is one.
Usage: check-layers.py [--root DIR] [--max-function-lines N]
"""
import argparse
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SYSTEM_INCLUDE = re.compile(r"^\s*#\s*include\s+<([^>]+)>")
SOURCE_SUFFIXES = (".h", ".cpp", ".cuh", ".cu")
# The folder's own files (ui/main_window.*), named in a layer listing.
OWN_FILES = "."


# --- layers ------------------------------------------------------------------


class Layers:
    """A layer listing: each layer's name (a folder relative to the listing's
    folder, or "." for its own files) and the layers its arrows point at."""

    def __init__(self, path, base):
        self.path = path  # the listing, for messages
        self.base = base  # the folder it describes, relative to the root ("core")
        self.order = []
        self.arrows = {}
        self.lines = {}
        self.findings = []
        with open(path, encoding="utf-8") as listing:
            for number, line in enumerate(listing, 1):
                text = line.split("#", 1)[0].strip()
                if not text:
                    continue
                name, _, targets = text.partition(":")
                name = name.strip()
                if name in self.arrows:
                    self.findings.append(f"{base}/layers.txt:{number}: layer '{name}' twice")
                self.order.append(name)
                self.arrows[name] = targets.split()
                self.lines[name] = number
        for name in self.order:
            for target in self.arrows[name]:
                if target not in self.arrows:
                    self.findings.append(
                        f"{base}/layers.txt:{self.lines[name]}: '{name}' points at "
                        f"'{target}', which is not a layer")
        self.findings += self.arrow_circles()
        self.reach = {name: self.reachable(name) for name in self.order}

    def reachable(self, start):
        seen, work = set(), [start]
        while work:
            for target in self.arrows.get(work.pop(), ()):
                if target not in seen:
                    seen.add(target)
                    work.append(target)
        return seen

    def arrow_circles(self):
        return [
            f"{self.base}/layers.txt:{self.lines[name]}: the arrows of '{name}' lead back to it"
            for name in self.order if name in self.reachable(name)
        ]

    def layer_of(self, relative):
        """The layer of a file (relative to the listing's folder): the
        declared folder that holds it directly ("." for the listing's own
        files), or None. A subfolder is a layer of its own or none: it does
        not join its parent's."""
        folder = os.path.dirname(relative).replace(os.sep, "/")
        if folder == "":
            return OWN_FILES if OWN_FILES in self.arrows else None
        return folder if folder in self.arrows else None

    def arrows_text(self, name):
        return f"{name}: {' '.join(self.arrows[name])}".rstrip(": ")


def source_files(root, base):
    top = os.path.join(root, base)
    for folder, _, names in sorted(os.walk(top)):
        for name in sorted(names):
            if name.endswith(SOURCE_SUFFIXES):
                yield os.path.relpath(os.path.join(folder, name), top)


def includes_of(path):
    with open(path, encoding="utf-8") as source:
        for number, line in enumerate(source, 1):
            match = INCLUDE.match(line)
            if match:
                yield number, match.group(1)


def resolve(root, base, relative, target, core_layers):
    """Where an include of `base/relative` leads: ("base", path relative to
    base) for a file of this tree, ("core", path) for a core header, else None.
    Quoted includes look beside the file first, then in the tree's root."""
    beside = os.path.normpath(os.path.join(os.path.dirname(relative), target))
    if os.path.isfile(os.path.join(root, base, beside)):
        return base, beside
    if os.path.isfile(os.path.join(root, base, target)):
        return base, os.path.normpath(target)
    if base != "core" and target.split("/", 1)[0] in core_layers.arrows:
        return "core", os.path.normpath(target)
    return None


def layer_findings(root, layers, core_layers):
    base = layers.base
    findings = []
    for relative in source_files(root, base):
        layer = layers.layer_of(relative)
        if layer is None and os.sep not in relative:
            continue  # the folder's own build files (core/torch_pch.cpp)
        if layer is None:
            findings.append(f"{base}/{relative}: folder '{os.path.dirname(relative)}' is not "
                            f"a layer in {base}/layers.txt")
            continue
        for number, target in includes_of(os.path.join(root, base, relative)):
            place = resolve(root, base, relative, target, core_layers)
            if place is None or place[0] != base:
                continue
            target_layer = layers.layer_of(place[1])
            if target_layer is None or target_layer == layer:
                continue
            if target_layer not in layers.reach[layer]:
                findings.append(
                    f"{base}/{relative}:{number}: includes {target} from layer "
                    f"'{target_layer}', which '{layer}' does not point at "
                    f"({base}/layers.txt: {layers.arrows_text(layer)})")
    return findings


def part_of(path):
    return os.path.splitext(path)[0]


def circle_findings(root, bases, core_layers):
    """Strongly connected components of the part graph (Tarjan, iterative)."""
    edges = {}
    for base in bases:
        for relative in source_files(root, base):
            source = part_of(f"{base}/{relative}")
            edges.setdefault(source, set())
            for _, target in includes_of(os.path.join(root, base, relative)):
                place = resolve(root, base, relative, target, core_layers)
                if place is None:
                    continue
                target_part = part_of(f"{place[0]}/{place[1]}")
                if target_part != source:
                    edges[source].add(target_part)
    index, low, on_stack, stack, components = {}, {}, set(), [], []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    return ["these parts include each other in a circle: " + " -> ".join(c) for c in components]


# --- function length ---------------------------------------------------------

RAW_STRING = re.compile(r'R"([^()\\\s]{0,16})\(')


CONDITIONAL = re.compile(r"^\s*#\s*(if|ifdef|ifndef|elif|else|endif)\b")


def first_branches_only(text):
    """`text` with the #elif and #else branches of every conditional blanked
    (newlines kept): where each branch opens its own function header, only
    the first is measured, so braces still pair up."""
    out = []
    inactive = []  # per open conditional: whether this branch is left out
    for line in text.split("\n"):
        match = CONDITIONAL.match(line)
        directive = match.group(1) if match else None
        if directive in ("if", "ifdef", "ifndef"):
            inactive.append(False)
        elif directive in ("elif", "else") and inactive:
            inactive[-1] = True
        elif directive == "endif" and inactive:
            inactive.pop()
        out.append("" if any(inactive) and directive is None else line)
    return "\n".join(out)


def blank_out(text):
    """The source with comments, string and character literals and
    preprocessor lines replaced by spaces, newlines kept, so that braces
    and parentheses are code and line numbers still hold."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c == "#":
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append(" \n")
                    i += 2
                    continue
                out.append(" ")
                i += 1
            continue
        if c == "\n":
            out.append(c)
            line_start = True
            i += 1
            continue
        if not c.isspace():
            line_start = False
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                out.append(" ")
                i += 1
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
            continue
        raw = RAW_STRING.match(text, i)
        if raw and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            end = text.find(")" + raw.group(1) + '"', raw.end())
            end = n if end < 0 else end + len(raw.group(1)) + 2
            out.append('"' + re.sub(r"[^\n]", " ", text[i + 1:end - 1]) + '"')
            i = end
            continue
        if c in "\"'":
            # A digit separator (1'000'000) is no character literal.
            if c == "'" and i > 0 and text[i - 1].isalnum() and i + 1 < n and text[i + 1].isalnum():
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (min(j, n) - i - 1) + (c if j < n else ""))
            i = j + 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


TEMPLATE_PREFIX = re.compile(r"^\s*template\s*<")
ACCESS = re.compile(r"^\s*(public|private|protected|signals|Q_SIGNALS|Q_SLOTS|slots)"
                    r"(\s+(Q_SLOTS|slots))?\s*:(?!:)")
QT_MACRO = re.compile(r"\bQ_[A-Z_]+\b(\s*\([^()]*\))?")
ATTRIBUTE = re.compile(r"\[\[.*?\]\]")
def strip_template(header):
    """`header` without a leading template<...> (balanced angle brackets)."""
    while TEMPLATE_PREFIX.match(header):
        start = header.index("<")
        depth = 0
        for position in range(start, len(header)):
            if header[position] == "<":
                depth += 1
            elif header[position] == ">":
                depth -= 1
                if depth == 0:
                    header = header[position + 1:]
                    break
        else:
            return header
    return header


def clean_header(header):
    header = ATTRIBUTE.sub(" ", header)
    header = QT_MACRO.sub(" ", header)
    while True:
        match = ACCESS.match(header)
        if not match:
            break
        header = header[match.end():]
    return strip_template(header).strip()


def top_level(header):
    """`header` with everything inside parentheses, brackets and braces
    removed: what a signature says outside its parameter lists."""
    out, depth = [], 0
    for c in header:
        if c in "([{":
            depth += 1
            out.append(c if depth == 1 else "")
        elif c in ")]}":
            depth -= 1
            out.append(c if depth == 0 else "")
        elif depth == 0:
            out.append(c)
    return "".join(out)


def classify(header, scope):
    """What an opening brace at namespace or class scope opens:
    "namespace", "class", "function", "member-init" (a brace-initialised
    member in a constructor's initializer list) or "data"."""
    header = clean_header(header)
    flat = top_level(header)
    if re.match(r"^catch\s*\(", header):
        return "handler"  # of the function-try-block just closed
    if re.match(r"^(inline\s+)?namespace\b", header) or re.match(r"^extern\s*(\"\s*\")?$", flat):
        return "namespace"
    if re.match(r"^(typedef\s+)?(class|struct|union)\b", header) and "(" not in flat.split(":")[0]:
        return "class"
    if re.match(r"^(typedef\s+)?enum\b", header):
        return "data"
    if "(" not in flat:
        return "data"
    before_params = flat.split("(", 1)[0]
    if "=" in before_params and "operator" not in before_params:
        return "data"  # a variable initialised from a call or a lambda
    tail = flat[flat.rfind(")") + 1:]
    if re.search(r"[\w>\]]\s*$", flat) and re.search(r"\)\s*:(?!:)", flat):
        return "member-init"  # Foo::Foo(int x) : a_(x), b_{ ...
    if re.match(r"^\s*((const|volatile|noexcept|override|final|mutable|&|&&|throw\(\))\s*)*"
                r"(->[^;{}]*?)?\s*(requires\b[^;{}]*?)?\s*(try)?\s*$", tail) or \
            re.search(r"\)\s*:(?!:)", flat):
        return "function"  # a function-try-block's "try" and a requires clause included
    return "data"


def function_name(header, owner):
    flat = top_level(clean_header(header))
    before = flat.split("(", 1)[0].split()
    name = before[-1] if before else "?"
    if owner and "::" not in name:
        name = f"{owner}::{name}"
    return name


def class_name(header):
    words = re.findall(r"[A-Za-z_]\w*", clean_header(header).split(":")[0].split("{")[0])
    names = [w for w in words if w not in ("class", "struct", "union", "final", "typedef")]
    return names[-1] if names else ""


LAMBDA_AT_END = re.compile(r"\[[^\[\]{};]*\]\s*(<(?:[^<>]|<[^<>]*>)*>)?\s*"
                           r"(\((?:[^()]|\([^()]*\))*\))?\s*"
                           r"((mutable|constexpr|noexcept)\s*)*(->[^{};=]*)?$")


def lambda_name(header):
    """The variable a lambda outside any function initialises, else "lambda"."""
    before = top_level(clean_header(header)).split("=", 1)
    words = re.findall(r"[A-Za-z_]\w*", before[0]) if len(before) == 2 else []
    return words[-1] if words else "lambda"


def opens_in_parentheses(header):
    """Whether the header is inside a parameter list or a member's
    initialiser: a brace there (a braced default argument, `v_(Bar{1})`)
    belongs to the header, not to a body."""
    return header.count("(") > header.count(")")


def long_functions_in(text, limit):
    """(line, name, length) of every function body in `text` longer than `limit`."""
    code = blank_out(first_branches_only(text))
    longest = {}  # start line -> (name, length): a try-block's handlers extend it
    # Each scope: [kind, owner or name, start line]; a header-brace scope keeps
    # the header it interrupts instead of a name.
    scopes = [["namespace", "", 0]]
    header, header_line = "", None
    last_function = ("?", 0)  # for the handlers of a function-try-block
    recent = ""  # the code just before this character, for lambdas in initialisers
    line = 1
    for c in code:
        recent = (recent + c)[-400:]
        if c == "\n":
            line += 1
            if QT_MACRO.fullmatch(header.strip()):
                header, header_line = "", None  # Q_OBJECT: a macro line with no ";"
        kind = scopes[-1][0]
        if kind in ("function", "block"):
            # Inside a body nothing is counted apart: lambdas and local
            # classes belong to their function.
            if c == "{":
                scopes.append(["block", "", line])
            elif c == "}":
                closed = scopes.pop()
                if closed[0] == "function":
                    length = line - closed[2] + 1
                    last_function = (closed[1], closed[2])
                    if length > longest.get(closed[2], ("", 0))[1]:
                        longest[closed[2]] = (closed[1], length)
            continue
        if c == "{":
            if LAMBDA_AT_END.search(recent[:-1].rstrip()):
                # A lambda outside any function (a table's entry, a constant).
                start = line if kind == "data" else (header_line or line)
                name = lambda_name(header) if kind != "data" else "lambda"
                scopes.append(["function", name, start])
                if kind != "data":
                    header, header_line = "", None
                continue
            if kind == "data":
                scopes.append(["data", "", line])
                continue
            what = ("header-brace" if opens_in_parentheses(header) else classify(header, kind))
            start = header_line or line
            if what == "function":
                scopes.append(["function", function_name(header, scopes[-1][1]), start])
            elif what == "handler":
                scopes.append(["function", last_function[0], last_function[1]])
            elif what == "class":
                scopes.append(["class", class_name(header), start])
            elif what == "namespace":
                scopes.append(["namespace", "", start])
            elif what in ("member-init", "header-brace"):
                scopes.append(["header-brace", header, header_line])
            else:
                scopes.append(["data", "", start])
            if what not in ("member-init", "header-brace"):
                header, header_line = "", None
            continue
        if c == "}":
            closed = scopes.pop() if len(scopes) > 1 else scopes[0]
            if closed[0] == "header-brace":
                header, header_line = closed[1] + "{}", closed[2]
            elif kind != "data" or scopes[-1][0] != "data":
                header, header_line = "", None
            continue
        if kind in ("data", "header-brace"):
            continue  # an initial value: only lambdas in it are counted
        if c == ";":
            header, header_line = "", None
            continue
        if c == ":" and ACCESS.fullmatch(header.strip() + ":"):
            header, header_line = "", None  # "public:", "private Q_SLOTS:"
            continue
        if header_line is None and not c.isspace():
            header_line = line
        header += c
    return [(start, name, length) for start, (name, length) in sorted(longest.items())
            if length > limit]


def long_functions(root, bases, limit):
    findings = []
    for base in bases:
        for relative in source_files(root, base):
            with open(os.path.join(root, base, relative), encoding="utf-8") as source:
                text = source.read()
            for line, name, length in long_functions_in(text, limit):
                findings.append(
                    f"{base}/{relative}:{line}: {name} is {length} lines (at most {limit})")
    return findings


# --- the rest ----------------------------------------------------------------

WIDGET_HEADER = re.compile(r"^(QtWidgets/|QtPrintSupport/|qcustomplot|Q(Widget|Dialog|"
                           r"MainWindow|Label|PushButton|TableWidget|TableView|TreeView|"
                           r"ComboBox|SpinBox|CheckBox|LineEdit|Layout|HBoxLayout|VBoxLayout|"
                           r"GridLayout|FormLayout|Menu|Action|MessageBox|FileDialog|"
                           r"ScrollArea|TabWidget|Splitter|ToolTip|Application)\b)")


def model_widget_findings(root):
    findings = []
    models = os.path.join(root, "ui", "models")
    if not os.path.isdir(models):
        return findings
    for relative in source_files(root, "ui/models"):
        with open(os.path.join(models, relative), encoding="utf-8") as source:
            for number, line in enumerate(source, 1):
                match = SYSTEM_INCLUDE.match(line)
                if match and WIDGET_HEADER.match(match.group(1)):
                    findings.append(f"ui/models/{relative}:{number}: includes <{match.group(1)}>, "
                                    "a widget header: models hold data, not widgets")
    return findings


DOC_PAGE = re.compile(r"\bdocs/[\w./-]+\.md\b")


def doc_pointer_findings(root, bases):
    findings = []
    for base in bases:
        top = os.path.join(root, base)
        for folder, _, names in os.walk(top):
            for name in sorted(names):
                if name not in ("layers.txt", "CMakeLists.txt"):
                    continue
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8") as text:
                    for number, line in enumerate(text, 1):
                        for page in DOC_PAGE.findall(line):
                            if not os.path.isfile(os.path.join(root, page)):
                                findings.append(f"{os.path.relpath(path, root)}:{number}: "
                                                f"names {page}, which does not exist")
    return findings


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    parser.add_argument("--max-function-lines", type=int, default=80)
    args = parser.parse_args()
    root = os.path.abspath(args.root)
    core_layers = Layers(os.path.join(root, "core", "layers.txt"), "core")
    listings = [core_layers]
    if os.path.isfile(os.path.join(root, "ui", "layers.txt")):
        listings.append(Layers(os.path.join(root, "ui", "layers.txt"), "ui"))
    findings = []
    for layers in listings:
        findings += layers.findings + layer_findings(root, layers, core_layers)
    bases = [base for base in ("core", "ui", "app") if os.path.isdir(os.path.join(root, base))]
    findings += circle_findings(root, bases, core_layers)
    findings += long_functions(root, bases, args.max_function_lines)
    findings += model_widget_findings(root)
    findings += doc_pointer_findings(root, ["core", "ui"])
    for finding in findings:
        print(finding)
    summary = "; ".join(f"{layers.base}: {len(layers.order)} layers" for layers in listings)
    print(f"check-layers: {summary}; {len(findings)} finding(s)")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
