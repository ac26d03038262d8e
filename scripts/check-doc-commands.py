#!/usr/bin/env python3
"""Every stepscope-cli command the README and docs/ show in a code block
still parses, and every relative link among those pages leads to a file
that exists. Run with STEPSCOPE_CLI_PARSE_ONLY=1, the CLI parses its
command line (an unknown flag or subcommand, a value of the wrong type, a
missing argument exit 2) and stops before running anything. CTest
doc_commands; alone:

    scripts/check-doc-commands.py build/default/app/stepscope-cli [FILE.md ...]

Continued lines (a trailing backslash) are joined, comments after "#" and
optional parts in brackets ("[--json]") are left out. Exit 0 when all parse,
1 naming each that does not.
"""
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROGRAM = re.compile(r"^(?:\S*/)?stepscope-cli(?=\s|$)")


def commands(markdown):
    """(line number, command) for each stepscope-cli command in a fenced block."""
    lines = markdown.split("\n")
    fenced = False
    joined, start = "", 0
    for number, line in enumerate(lines, 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            continue
        if not joined:
            start = number
        text = re.sub(r"\s+#.*$", "", line).rstrip()
        if text.endswith("\\"):
            joined += text[:-1] + " "
            continue
        joined += text
        command, joined = joined.strip(), ""
        if PROGRAM.match(command):
            yield start, re.sub(r"\s*\[[^\]]*\]", "", command)


def broken_links(path, markdown):
    """The relative links of `path` (outside code) whose file does not exist."""
    prose = re.sub(r"```.*?```", "", markdown, flags=re.S)
    for target in re.findall(r"\]\(([^)\s]+)\)", prose):
        if re.match(r"(https?:|mailto:|#)", target):
            continue
        if not (path.parent / target.split("#")[0]).exists():
            yield target


def shown(path):
    """`path` relative to the checkout where it lies in it."""
    return path.relative_to(ROOT) if path.is_relative_to(ROOT) else path


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    cli = sys.argv[1]
    files = [Path(f).resolve() for f in sys.argv[2:]]
    files = files or [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    environment = dict(os.environ, STEPSCOPE_CLI_PARSE_ONLY="1")
    checked, failed = 0, []
    for path in files:
        markdown = path.read_text(encoding="utf-8")
        for target in broken_links(path, markdown):
            failed.append(f"{shown(path)}: a link to {target}, which does not exist")
        for line, command in commands(markdown):
            arguments = shlex.split(PROGRAM.sub("", command, count=1))
            result = subprocess.run([cli, *arguments], env=environment, capture_output=True,
                                    text=True, timeout=60)
            checked += 1
            if result.returncode != 0:
                failed.append(f"{shown(path)}:{line}: {command}\n  "
                              f"exit {result.returncode}: {result.stderr.strip()[-300:]}")
    for failure in failed:
        print(failure, file=sys.stderr)
    print(f"check-doc-commands: {checked} commands in {len(files)} pages; {len(failed)} problems")
    return 1 if failed or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
