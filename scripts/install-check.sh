#!/usr/bin/env bash
# `cmake --install` into a temporary prefix, as a user installs StepScope to
# ~/.local, then as that user: every file where it belongs, the installed
# programs' --version (naming the LibTorch they loaded, found through their
# RUNPATH with LD_LIBRARY_PATH unset, or through STEPSCOPE_TORCH), and the
# installed app started offscreen on each installed example, opening it and
# quitting (--quit-after-load: its exit status says whether it opened). Run
# by CTest as install_check; alone:
#
#   scripts/install-check.sh [BUILD_DIR [TORCH_LIB_DIR]]
#
# BUILD_DIR: a configured and built build folder (default build/default);
# TORCH_LIB_DIR: the torch/lib it was built against, which the installed
# programs must load (default: the one torch.utils of the bootstrap's venv
# names).
#
# The prefix holds a space, which the launchers and the desktop entry must
# survive.
set -euo pipefail
build="$(realpath "${1:-build/default}")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
prefix="$work/pre fix"
say() { echo "install-check: $*" >&2; }
fail() { say "FAILED: $*"; exit 1; }

say "cmake --install $build --prefix '$prefix'"
cmake --install "$build" --prefix "$prefix" >"$work/install.log" || { cat "$work/install.log" >&2; fail "cmake --install"; }
torch_lib="${2:-}"
if [ -z "$torch_lib" ]; then
  python="$(sed -n 's/^STEPSCOPE_PYTHON:[A-Z]*=//p' "$build/CMakeCache.txt")"
  torch_lib="$("$python" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')"
fi
torch_lib="$(realpath "$torch_lib")"
[ -e "$torch_lib/libtorch.so" ] || fail "no libtorch.so in '$torch_lib'"
gui=no
grep -q '^STEPSCOPE_BUILD_GUI:BOOL=ON' "$build/CMakeCache.txt" && gui=yes

expect_file() { [ -f "$prefix/$1" ] || fail "$1 is not installed"; }
programs=(stepscope-cli)
[ "$gui" = yes ] && programs+=(stepscope)
for program in "${programs[@]}"; do
  [ -x "$prefix/bin/$program" ] || fail "bin/$program is not installed"
  [ -x "$prefix/libexec/$program" ] || fail "libexec/$program is not installed"
  runpath="$(readelf -d "$prefix/libexec/$program" | sed -n 's/.*R\(UN\)\?PATH.*\[\(.*\)\]/\2/p')"
  case ":$runpath:" in
    *":$torch_lib:"*) ;;
    *) fail "libexec/$program's RUNPATH '$runpath' lacks the torch it was built against ($torch_lib)" ;;
  esac
done
expect_file share/stepscope/python/stepscope/worker.py
expect_file share/stepscope/examples/examples.json
expect_file share/stepscope/examples/README.md
examples="$prefix/share/stepscope/examples"
mapfile -t example_paths < <(python3 -c 'import json, sys
for e in json.load(open(sys.argv[1]))["examples"]: print(e["path"])' "$examples/examples.json")
[ "${#example_paths[@]}" -ge 4 ] || fail "examples.json lists ${#example_paths[@]} examples"
for path in "${example_paths[@]}"; do
  [ -e "$examples/$path" ] || fail "example $path is listed but not installed"
done

if [ "$gui" = yes ]; then
  expect_file share/icons/hicolor/scalable/apps/stepscope.svg
  expect_file share/metainfo/io.github.stepscope.StepScope.metainfo.xml
  entry="$prefix/share/applications/stepscope.desktop"
  expect_file share/applications/stepscope.desktop
  grep -qxF "Exec=\"$prefix/bin/stepscope\" %F" "$entry" || fail "the desktop entry's Exec: $(grep ^Exec= "$entry")"
  grep -qxF "TryExec=$prefix/bin/stepscope" "$entry" || fail "the desktop entry's TryExec: $(grep ^TryExec= "$entry")"
  if command -v desktop-file-validate >/dev/null; then
    desktop-file-validate "$entry" || fail "desktop-file-validate"
  else
    say "no desktop-file-validate (Debian desktop-file-utils): the entry is not validated"
  fi
  if command -v appstreamcli >/dev/null; then
    appstreamcli validate --no-net "$prefix/share/metainfo/io.github.stepscope.StepScope.metainfo.xml" >"$work/appstream.log" \
      || { cat "$work/appstream.log" >&2; fail "appstreamcli validate"; }
  fi
fi

# The installed programs, from outside the source and build trees, with
# nothing on LD_LIBRARY_PATH: their RUNPATH finds LibTorch.
cd "$work"
for program in "${programs[@]}"; do
  version="$(env -u LD_LIBRARY_PATH -u DISPLAY -u WAYLAND_DISPLAY -u QT_QPA_PLATFORM "$prefix/bin/$program" --version)" \
    || fail "$program --version"
  say "$program --version: $(echo "$version" | tr '\n' '|')"
  echo "$version" | grep -q "^$program (StepScope) [0-9]" || fail "$program --version names no StepScope version"
  echo "$version" | grep -q "^LibTorch [0-9].*, loaded from $torch_lib/libtorch" || fail "$program --version names no LibTorch loaded from $torch_lib"
  echo "$version" | grep -q "^CUDA: " || fail "$program --version says nothing of CUDA"
  # STEPSCOPE_TORCH: the same torch under another folder is the one loaded.
  mkdir -p "$work/torch-elsewhere"
  ln -sfn "$torch_lib" "$work/torch-elsewhere/lib"
  version="$(env -u LD_LIBRARY_PATH STEPSCOPE_TORCH="$work/torch-elsewhere" "$prefix/bin/$program" --version)"
  echo "$version" | grep -q "loaded from $work/torch-elsewhere/lib/libtorch" || fail "$program did not take LibTorch from STEPSCOPE_TORCH: $version"
  status=0
  STEPSCOPE_TORCH="$work/no-torch-here" "$prefix/bin/$program" --version >/dev/null 2>"$work/err" || status=$?
  [ "$status" = 2 ] && grep -q "STEPSCOPE_TORCH" "$work/err" || fail "a STEPSCOPE_TORCH without LibTorch: exit $status, $(cat "$work/err")"
done
"$prefix/bin/stepscope-cli" show "$examples/${example_paths[0]}" >/dev/null 2>&1 \
  || [ -d "$examples/${example_paths[0]}" ] || fail "stepscope-cli show of the installed example ${example_paths[0]}"

if [ "$gui" = yes ]; then
  export QT_QPA_PLATFORM=offscreen XDG_CONFIG_HOME="$work/config" XDG_RUNTIME_DIR="$work/runtime"
  mkdir -m 700 "$XDG_RUNTIME_DIR"
  for path in "${example_paths[@]}"; do
    out="$(env -u LD_LIBRARY_PATH "$prefix/bin/stepscope" --quit-after-load "$examples/$path" 2>"$work/err")" \
      || { cat "$work/err" >&2; fail "the installed app did not open the example $path"; }
    say "$out"
    echo "$out" | grep -q "^opened $examples/$path" || fail "the app said: $out"
  done
  # And says so when a file does not open.
  echo '{"not": "stepscope"}' >"$work/other.json"
  status=0
  "$prefix/bin/stepscope" --quit-after-load "$work/other.json" >/dev/null 2>&1 || status=$?
  [ "$status" = 2 ] || fail "the app opened someone else's JSON (exit $status)"
fi
say "ok"
