#!/usr/bin/env bash
# Run the Neovim end-to-end test with $NVIM against the real daemon.
#   NVIM=nvim DG_PYTHON=.venv/bin/python DG_MODEL=<checkpoint dir or empty> bash editors/nvim/test/run.sh
set -euo pipefail
source "$(dirname "$0")/../../test/e2e-env.sh"
NVIM=${NVIM:-nvim}
ver=$("$NVIM" --version | head -1 | awk '{print $2}')
dg_workdir "nvim-$ver"
echo "== Neovim $ver: fallback ghost text against the real daemon (log: $out/)"
set +e
timeout 300 "$NVIM" --headless -u editors/nvim/test/minimal_init.lua -i NONE -n \
  -c "luafile editors/nvim/test/e2e.lua" 2> >(tee "$out/nvim.stderr" >&2)
rc=$?
set -e
dg_verdict "Neovim $ver" "$rc"
