# Sourced by the editors' end-to-end run.sh (Neovim, Emacs): the repository root as working folder, the daemon's
# Python, model and import path, a fresh artifacts folder per run, and the verdict read from the test's result file.
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
export DG_PYTHON=${DG_PYTHON:-.venv/bin/python}
export DG_MODEL=${DG_MODEL:-}
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}

# dg_workdir NAME: .test-artifacts/NAME made anew ($out), the test's work folder and result file
dg_workdir() {
  out=.test-artifacts/$1
  rm -rf "$out" && mkdir -p "$out"
  export DG_WORKDIR=$PWD/$out DG_RESULT=$PWD/$out/result.json
}

# dg_verdict LABEL RC: passed when the editor exited 0 and wrote {"ok": true}; otherwise the daemon log's tail
dg_verdict() {
  if [ "$2" -ne 0 ] || ! grep -q '"ok": \?true' "$DG_RESULT" 2>/dev/null; then
    echo "$1: FAILED (rc=$2); daemon log tail:"; tail -20 "$DG_WORKDIR/daemon.log" 2>/dev/null || true
    return 1
  fi
  echo "$1: passed"
}
