#!/usr/bin/env bash
# StepScope's CLI as a user without root builds it on a GPU cluster: with
# the build packages present, but no cmake or ninja on PATH and a sudo that
# must never be called, `scripts/build.sh server` (the bootstrap, cmake and
# ninja from PyPI, the server preset) goes through and the CLI it built runs
# nano. A bootstrap that lacks a compiler lists it and exits 1. Run by CTest
# as no_root_check; alone:
#
#   scripts/no-root-check.sh [PYTHON]
#
# PYTHON: the bootstrap's venv Python (default ~/.cache/stepscope/venv/bin/
# python), whose torch the user's venv is given: hard links to torch and its
# requirements (several GB, not downloaded again) named by a .pth file.
#
# As root it makes (once) the system user stepscope-noroot and runs the
# build as that user; as anyone else it runs it as themselves. What the user
# keeps between runs (its ccache, pip cache, venv) lives in STATE
# (/var/tmp/stepscope-no-root-check, or -UID for a user; STEPSCOPE_NO_ROOT_STATE
# names another), so a second run compiles little; the source copy and its
# build are made fresh each run.
# The first run reuses what the caller's own builds compiled: the user's
# ccache is given hard links to the caller's cache entries (readable by that
# user alone, the caller's files left as they are), and the bootstrap takes
# PyPI's cmake of the caller's cmake version, so that the server build's
# command lines are the default build's (cmake/ccache-launch.sh makes the
# paths in them relative). On a fresh machine the build/default that
# scripts/test.sh made first then serves nearly every compile.
# STEPSCOPE_NO_ROOT_JOBS: compiles at a time (default: the cores; CTest
# gives 1, so that the check runs beside the other suites).
# Exit 77 (CTest's skip) where it cannot be done here, with the reason.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
cache="${STEPSCOPE_CACHE:-$HOME/.cache/stepscope}"
python="${1:-$cache/venv/bin/python}"
say() { echo "no-root-check: [${SECONDS}s] $*" >&2; }
skip() { echo "no-root-check: SKIP: $*" >&2; exit 77; }
fail() { echo "no-root-check: FAIL: $*" >&2; exit 1; }
[ -f "$root/CMakePresets.json" ] && [ -x "$root/scripts/bootstrap.sh" ] ||
  fail "'$root' is not StepScope's source tree (run the script where it is)"

[ -x "$python" ] || skip "'$python' is missing (scripts/bootstrap.sh makes it)"
user=stepscope-noroot
if [ "$(id -u)" = 0 ]; then
  state="${STEPSCOPE_NO_ROOT_STATE:-/var/tmp/stepscope-no-root-check}"
  if ! id -u "$user" >/dev/null 2>&1; then
    useradd --system --user-group --no-create-home --home-dir "$state/home" \
      --shell /usr/sbin/nologin "$user" ||
      skip "cannot make the unprivileged user $user (useradd failed)"
  fi
  uid="$(id -u "$user")" gid="$(id -g "$user")"
  as_user() { setpriv --reuid="$uid" --regid="$gid" --clear-groups -- "$@"; }
else
  state="${STEPSCOPE_NO_ROOT_STATE:-/var/tmp/stepscope-no-root-check-$(id -u)}"
  user="$(id -un)"
  as_user() { "$@"; }
fi
mkdir -p "$state"
exec 9>"$state.lock"
flock 9  # one check at a time uses STATE
for sub in home cache ccache pip tmp; do
  mkdir -p "$state/$sub"
done
[ "$(id -u)" = 0 ] && chown "$user:$user" "$state" "$state"/{home,cache,ccache,pip,tmp}
chmod 700 "$state/ccache"  # it holds links to the caller's cache entries: the user's alone
cd "$state"  # a folder the user may enter (the checkout's may not be)
say "as $user ($(as_user id -u)), in $state"

# Torch and what it needs (numpy and pytest too, which the bootstrap wants),
# linked where the user can read it: as root, hard links, since the cache
# venv may sit in a home the user cannot enter. Made again when PYTHON's
# torch changes.
torch_version="$("$python" -c 'from importlib.metadata import version; print(version("torch"))')"
stamp="$python $torch_version"
if [ "$(cat "$state/torch-only.stamp" 2>/dev/null)" != "$stamp" ]; then
  say "linking torch $torch_version and its requirements from $python"
  rm -rf "$state/torch-only" "$state/cache/venv"
  # Root: hard links (same file system); a user: symbolic ones to what it can read.
  how=""
  [ "$(id -u)" != 0 ] || how=--hardlink
  "$python" "$root/scripts/link-torch.py" "$state/torch-only" $how --also numpy pytest ||
    skip "torch cannot be linked for the user (another file system?)"
  echo "$stamp" >"$state/torch-only.stamp"
fi

# The user's venv: a Python the user can run, of torch's version.
py_version="$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
base=""
for candidate in "/usr/bin/python$py_version" "/usr/local/bin/python$py_version"; do
  if [ -x "$candidate" ] && as_user "$candidate" -c "import venv, ensurepip" 2>/dev/null; then
    base="$candidate"
    break
  fi
done
[ -n "$base" ] || skip "no Python $py_version with venv that $user can run (/usr/bin/python$py_version; Debian python3-venv)"
venv="$state/cache/venv"
if [ ! -x "$venv/bin/python" ]; then
  say "the user's venv, from $base"
  as_user "$base" -m venv "$venv"
  site="$(as_user "$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  echo "$state/torch-only" | as_user tee "$site/torch-only.pth" >/dev/null
fi
as_user "$venv/bin/python" -c "import torch" ||
  skip "$user cannot import the linked torch from $venv"

# The user's PATH: the system's programs but cmake, ctest, cpack and ninja
# (so they come from PyPI), and a sudo that records every call.
path="$state/path"
rm -rf "$path" "$state/sudo-calls"
mkdir -p "$path"
for dir in /usr/local/bin /usr/bin /bin; do
  for program in "$dir"/*; do
    name="${program##*/}"
    case "$name" in cmake | ctest | cpack | ninja | sudo) continue ;; esac
    [ -e "$path/$name" ] || ln -s "$program" "$path/$name"
  done
done
cat >"$path/sudo" <<EOF
#!/bin/sh
# No password-less sudo here: 'sudo -n true' (asking whether there is) says
# no; any other call is one that could prompt, and fails the check.
echo "sudo \$*" >>'$state/sudo-calls'
[ "\$*" = "-n true" ] && exit 1
echo "no-root-check: sudo was called: sudo \$*" >&2
exit 1
EOF
chmod 755 "$path/sudo"
[ "$(id -u)" = 0 ] && chown -R "$user:$user" "$path"

# A fresh copy of the sources the user owns (the checkout may sit where the
# user cannot write, or read); its build dir is new each run.
src="$state/src"
rm -rf "$src"
mkdir -p "$src"
if git -C "$root" rev-parse --git-dir >/dev/null 2>&1; then
  git -C "$root" ls-files -z -co --exclude-standard |
    tar -C "$root" --null --ignore-failed-read -T - -cf - | tar -C "$src" -xf -
else
  tar -C "$root" --exclude=./build --exclude=./.git -cf - . | tar -C "$src" -xf -
fi
[ "$(id -u)" = 0 ] && chown -R "$user:$user" "$src"
trap 'rm -rf "$src"' EXIT

# CUDA's own folder first where there is one, as a cluster's `module load cuda` does.
user_path="$path"
[ ! -d /usr/local/cuda/bin ] || user_path="/usr/local/cuda/bin:$path"
# PyPI's cmake of the caller's version (3.25.1 -> cmake==3.25.*): the same
# command lines as the caller's builds, and so the same ccache entries.
pypi_cmake=""
caller_cmake="$(cmake --version 2>/dev/null | sed -n 's/^cmake version \([0-9]*\.[0-9]*\).*/\1/p')"
[ -z "$caller_cmake" ] || pypi_cmake="cmake==$caller_cmake.*"
environment=(env -i HOME="$state/home" USER="$user" LOGNAME="$user" PATH="$user_path"
  LANG=C.UTF-8 TMPDIR="$state/tmp" STEPSCOPE_CACHE="$state/cache" CCACHE_DIR="$state/ccache"
  CCACHE_MAXSIZE=0 STEPSCOPE_PYPI_CMAKE="$pypi_cmake"
  PIP_CACHE_DIR="$state/pip" CMAKE_BUILD_PARALLEL_LEVEL="${STEPSCOPE_NO_ROOT_JOBS:-$(nproc)}")

say "bootstrap without a compiler: it must list it and exit 1"
set +e
missing="$(cd "$src" && as_user "${environment[@]}" CXX=/nonexistent/c++ \
  scripts/bootstrap.sh --no-gui --no-slurm 2>&1)"
status=$?
set -e
[ "$status" = 1 ] || fail "bootstrap without a compiler exited $status, not 1:"$'\n'"$missing"
grep -q "a C++20 compiler (CXX is '/nonexistent/c++', not found). Debian: g++" <<<"$missing" ||
  fail "bootstrap without a compiler did not name it:"$'\n'"$missing"

have_ccache=0
command -v ccache >/dev/null && have_ccache=1
# What the caller compiled, the user's to read: hard links to the caller's
# cache entries in folders of the user's own (its writes replace a link,
# never change the caller's file). Not on another file system: then the
# user compiles what its own cache lacks.
caller_cache="$( [ "$have_ccache" = 0 ] || ccache -k cache_dir 2>/dev/null || true)"
if [ -n "$caller_cache" ] && [ -d "$caller_cache" ] && [ "$caller_cache" != "$state/ccache" ]; then
  if cp -al --remove-destination "$caller_cache/." "$state/ccache/" 2>/dev/null; then
    [ "$(id -u)" = 0 ] && find "$state/ccache" -type d -exec chown "$user:$user" {} +
    say "the user's ccache links the entries of $caller_cache"
  else
    say "the user's ccache cannot link $caller_cache's entries (another file system?): it compiles what it lacks"
  fi
fi
[ "$have_ccache" = 0 ] || as_user env CCACHE_DIR="$state/ccache" ccache -z >/dev/null
say "scripts/build.sh server as $user"
built=0
(cd "$src" && as_user "${environment[@]}" scripts/build.sh server) || built=$?
if [ -s "$state/sudo-calls" ] && grep -qvx "sudo -n true" "$state/sudo-calls"; then
  fail "sudo was called: $(tr '\n' ';' <"$state/sudo-calls")"
fi
[ "$built" = 0 ] || fail "scripts/build.sh server failed for $user (exit $built)"
[ -x "$state/cache/bin/cmake" ] && [ -x "$state/cache/bin/ninja" ] ||
  fail "the bootstrap did not take cmake and ninja from PyPI into $state/cache/bin"
grep -q "^CMAKE_COMMAND:INTERNAL=$state/cache/venv/" "$src/build/server/CMakeCache.txt" ||
  fail "the build did not use PyPI's cmake: $(grep '^CMAKE_COMMAND:' "$src/build/server/CMakeCache.txt")"

say "the built CLI runs nano"
cli="$src/build/server/app/stepscope-cli"
(cd "$state/tmp" && as_user "${environment[@]}" "$cli" run --model nano --ctx 16 --batch 2 \
  --warmup 0 --steps 1 --threads 1 --out "$state/tmp/nano.json" >/dev/null) ||
  fail "stepscope-cli run failed for $user"
report="$(as_user "${environment[@]}" "$cli" show "$state/tmp/nano.json")" ||
  fail "stepscope-cli show failed for $user"
grep -q "nano" <<<"$report" || fail "stepscope-cli show did not report the nano run: $report"
rm -f "$state/tmp/nano.json"
[ "$have_ccache" = 0 ] || say "the user's ccache:" \
  "$(as_user env CCACHE_DIR="$state/ccache" ccache -s | grep -E '^ *(Hits|Misses):' | tr -s ' ' | tr '\n' ';')"
say "ok"
