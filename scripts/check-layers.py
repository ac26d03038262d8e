#!/usr/bin/env python3
"""Checks the house rules of core/ that the compiler alone cannot see.

1. No file includes from a layer above its own (the order is core/layers.txt,
   the same list core/CMakeLists.txt builds the libraries from).
2. No two parts include each other, directly or around a longer circle (a part
   is a header and its .cpp: runner.cpp including python_worker.h while
   python_worker.cpp includes runner.h is a circle).
3. No function in core/ is longer than --max-function-lines (80).

Prints every finding with its file and line and exits 1 when there is one.
Usage: check-layers.py [--root DIR] [--max-function-lines N]
"""
import argparse
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SOURCE_SUFFIXES = (".h", ".cpp", ".cuh", ".cu")


def read_layers(core):
    layers = []
    with open(os.path.join(core, "layers.txt")) as listing:
        for line in listing:
            name = line.split("#", 1)[0].strip()
            if name:
                layers.append(name)
    return layers


def core_files(core):
    for folder, _, names in os.walk(core):
        for name in sorted(names):
            if name.endswith(SOURCE_SUFFIXES):
                yield os.path.relpath(os.path.join(folder, name), core)


def includes_of(core, relative):
    with open(os.path.join(core, relative), encoding="utf-8") as source:
        for number, line in enumerate(source, 1):
            match = INCLUDE.match(line)
            if match:
                yield number, match.group(1)


def part_of(relative):
    return os.path.splitext(relative)[0]


def layer_findings(core, layers):
    rank = {name: index for index, name in enumerate(layers)}
    findings = []
    for relative in core_files(core):
        folder = relative.split(os.sep, 1)[0]
        if folder not in rank:
            if os.sep in relative:
                findings.append(f"core/{relative}: folder '{folder}' is not in core/layers.txt")
            continue
        for number, target in includes_of(core, relative):
            target_folder = target.split("/", 1)[0]
            if target_folder in rank and rank[target_folder] > rank[folder]:
                findings.append(
                    f"core/{relative}:{number}: includes {target} from layer "
                    f"'{target_folder}', above '{folder}'")
    return findings


def circle_findings(core):
    """Strongly connected components of the part graph (Tarjan, iterative)."""
    edges = {}
    for relative in core_files(core):
        source = part_of(relative)
        for _, target in includes_of(core, relative):
            if os.path.exists(os.path.join(core, target)):
                target_part = part_of(target)
                if target_part != source:
                    edges.setdefault(source, set()).add(target_part)
        edges.setdefault(source, set())
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
    return [
        "core: these parts include each other in a circle: " + " -> ".join(c) for c in components
    ]


# A definition at namespace level starts in column 0 (clang-format indents
# nothing inside a namespace) and its body ends with a lone "}" in column 0.
SIGNATURE_START = re.compile(r"^[A-Za-z_~][\w:<>,\s\*&~]*[\s\*&:]~?[\w:]+\s*\(|^[A-Za-z_]\w*\s*\(")
NOT_A_FUNCTION = re.compile(r"^(namespace|struct|class|enum|union|using|typedef|template|extern)\b")


def long_functions(core, limit):
    findings = []
    for relative in core_files(core):
        with open(os.path.join(core, relative), encoding="utf-8") as source:
            lines = source.read().split("\n")
        number = 0
        while number < len(lines):
            line = lines[number]
            if NOT_A_FUNCTION.match(line) or not SIGNATURE_START.match(line):
                number += 1
                continue
            # The opening brace ends the signature within a few lines; a
            # declaration ends with ";" first.
            opening = None
            for ahead in range(number, min(number + 8, len(lines))):
                text = lines[ahead].split("//", 1)[0].rstrip()
                if text.endswith(";"):
                    break
                if text.endswith("{"):
                    opening = ahead
                    break
            if opening is None:
                number += 1
                continue
            closing = opening
            while closing < len(lines) and lines[closing] != "}":
                closing += 1
            length = closing - number + 1
            if length > limit:
                name = line.split("(", 1)[0].split()[-1]
                findings.append(
                    f"core/{relative}:{number + 1}: {name} is {length} lines (at most {limit})")
            number = closing + 1
    return findings


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    parser.add_argument("--max-function-lines", type=int, default=80)
    args = parser.parse_args()
    core = os.path.join(os.path.abspath(args.root), "core")
    layers = read_layers(core)
    findings = (layer_findings(core, layers) + circle_findings(core) +
                long_functions(core, args.max_function_lines))
    for finding in findings:
        print(finding)
    print(f"check-layers: {len(layers)} layers ({' < '.join(layers)}); "
          f"{len(findings)} finding(s)")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
