#!/usr/bin/env bash
# Run the Neovim end-to-end test with $NVIM against the real daemon.
#   NVIM=nvim DG_PYTHON=.venv/bin/python DG_MODEL=<checkpoint dir or empty> bash editors/nvim/test/run.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."
NVIM=${NVIM:-nvim}
export DG_PYTHON=${DG_PYTHON:-.venv/bin/python}
export DG_MODEL=${DG_MODEL:-}
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
ver=$("$NVIM" --version | head -1 | awk '{print $2}')
out=.test-artifacts/nvim-$ver
rm -rf "$out" && mkdir -p "$out"
export DG_WORKDIR=$PWD/$out DG_RESULT=$PWD/$out/result.json
echo "== Neovim $ver: fallback ghost text against the real daemon (log: $out/)"
set +e
timeout 300 "$NVIM" --headless -u editors/nvim/test/minimal_init.lua -i NONE -n \
  -c "luafile editors/nvim/test/e2e.lua" 2> >(tee "$out/nvim.stderr" >&2)
rc=$?
set -e
if [ $rc -ne 0 ] || ! grep -q '"ok":true\|"ok": true' "$DG_RESULT" 2>/dev/null; then
  echo "Neovim $ver: FAILED (rc=$rc); daemon log tail:"; tail -20 "$out/daemon.log" 2>/dev/null || true
  exit 1
fi
echo "Neovim $ver: passed"
