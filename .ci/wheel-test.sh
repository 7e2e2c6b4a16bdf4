#!/usr/bin/env bash
# Build the wheel, install it into a fresh venv, and use it from outside the source tree.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
.venv/bin/python -m build --wheel --outdir "$work/dist" . >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet "$work"/dist/toolbind-*.whl
"$work/venv/bin/toolbind" --version
# from the repo root, so the generated headers name specs/ exactly as the committed tree does
"$work/venv/bin/toolbind" generate specs -o "$work/out"
cd "$work"
"$work/venv/bin/python" - "$work/out" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import toolbind.compiler, toolbind.runtime
assert toolbind.compiler.__file__.startswith(sys.prefix), toolbind.compiler.__file__
import seeds
call = seeds.CallAdapter.validate_json('{"_tool": "weatherCheck", "location": "Paris"}')
assert call.location == "Paris", call
print("wheel OK:", toolbind.compiler.__file__)
PY
diff -r -x __pycache__ "$work/out" "$repo/generated"
