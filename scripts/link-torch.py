"""Links torch and every distribution it requires, found in the running
Python's environment, into TARGET: a folder a fresh venv names in a .pth
file, so that it has torch (several GB) without downloading it again.

    PYTHON scripts/link-torch.py TARGET [--hardlink] [--also NAME ...]

Symbolic links by default; --hardlink copies the folders as hard links
(same file system), for a user who cannot enter the environment's home.
--also adds distributions (and theirs) beside torch's.
"""
import argparse
import os
import shutil
from importlib.metadata import distribution, PackageNotFoundError

from pip._vendor.packaging.requirements import Requirement

parser = argparse.ArgumentParser()
parser.add_argument("target")
parser.add_argument("--hardlink", action="store_true")
parser.add_argument("--also", nargs="*", default=[])
args = parser.parse_args()

os.makedirs(args.target)
linked, todo, seen = set(), [(name, "") for name in ["torch", *args.also]], set()
while todo:
    name, extra = todo.pop()  # each extra asked for is a node of its own
    key = (name.lower().replace("_", "-"), extra)
    if key in seen:
        continue
    seen.add(key)
    try:
        dist = distribution(name)
    except PackageNotFoundError:
        continue  # an optional or platform-specific requirement not installed
    for text in dist.requires or []:
        requirement = Requirement(text)
        if requirement.marker is None or requirement.marker.evaluate({"extra": extra}):
            todo += [(requirement.name, e) for e in ["", *requirement.extras]]
    site = dist.locate_file("")
    for path in dist.files or []:
        top = path.parts[0]
        if top == ".." or top in linked or top == "__pycache__":
            continue  # scripts in bin/, or a folder shared with another distribution
        linked.add(top)
        source, destination = os.path.join(site, top), os.path.join(args.target, top)
        if not args.hardlink:
            os.symlink(source, destination)
        elif os.path.isdir(source):
            shutil.copytree(source, destination, symlinks=True, copy_function=os.link)
        elif os.path.exists(source):
            os.link(source, destination)
