#!/usr/bin/env bash
# Run the Emacs end-to-end tests against the real daemon, in batch Emacs: dgcomplete.el's ghost text (ghost), and
# the completion item and a code action through eglot and through lsp-mode.
#   DG_PYTHON=.venv/bin/python DG_MODEL=<checkpoint dir or empty> bash editors/emacs/test/run.sh [ghost|eglot|lsp-mode ...]
set -euo pipefail
source "$(dirname "$0")/../../test/e2e-env.sh"
EMACS=${EMACS:-emacs}
ver=$("$EMACS" --version | head -1 | awk '{print $3}')
# the package byte-compiles without a warning (Emacs's 80-column docstring advice aside)
tmp=$(mktemp -d) && cp editors/emacs/dgcomplete.el "$tmp/"
if ! "$EMACS" --batch --eval "(setq byte-compile-warnings '(not docstrings) byte-compile-error-on-warn t)" \
    -f batch-byte-compile "$tmp/dgcomplete.el"; then
  echo "Emacs $ver: dgcomplete.el does not byte-compile cleanly"; rm -rf "$tmp"; exit 1
fi
rm -rf "$tmp"

clients=("$@")
[ ${#clients[@]} -gt 0 ] || clients=(ghost eglot lsp-mode)
fail=0
for c in "${clients[@]}"; do
  dg_workdir "emacs-$ver-$c"
  echo "== Emacs $ver, $c: against the real daemon (log: $out/)"
  set +e
  timeout 300 "$EMACS" --batch -L editors/emacs -L editors/emacs/test -l "editors/emacs/test/$c-e2e.el" 2>&1 | tee "$out/emacs.log" \
    | grep --line-buffered '^\[emacs-e2e'
  rc=${PIPESTATUS[0]}
  set -e
  dg_verdict "Emacs $ver, $c" "$rc" || fail=1
done
exit $fail
