#!/usr/bin/env bash
# The README's Emacs picture: the shipped model's own ghost text from dgcomplete.el in a real, interactive Emacs
# (emacs -nw in tmux), default settings.
#
#   DG_PYTHON=.venv/bin/python [DG_MODEL=<dir>] ANSI2HTML=<ansi2html> CHROMIUM=/usr/bin/chromium \
#     bash editors/emacs/test/screenshot.sh            (make -C editors screenshot)
#
# It opens animals.py (the VS Code picture's file), goes to the end of `def __init__(self, name, color):` in the
# last class and presses RET as a user would; what python-mode and dgcomplete-mode do then is the picture: the
# terminal's cells with their colours (tmux capture-pane) drawn as HTML, the cursor where tmux has it, and a
# headless Chromium screenshot of that. Then it presses TAB, saves, and checks that the file gained exactly the
# ghost text (so what the picture shows is what the daemon sent).
# Output: .test-artifacts/emacs-screenshot.png; UPDATE_SCREENSHOT=1 also copies it to editors/emacs/screenshot.png.
set -euo pipefail
cd "$(dirname "$0")/../../.."
ROOT=$PWD
PY=${DG_PYTHON:-.venv/bin/python}
PY=$(cd "$(dirname "$PY")" && pwd)/$(basename "$PY")  # absolute, the venv's link kept
ANSI2HTML=${ANSI2HTML:-ansi2html}
CHROMIUM=${CHROMIUM:-chromium}
WORK=$ROOT/.test-artifacts/emacs-screenshot
SESSION=dg-emacs-shot-$$
rm -rf "$WORK" && mkdir -p "$WORK"
trap 'tmux kill-session -t "$SESSION" 2>/dev/null || true' EXIT

cp editors/test/animals.py.in "$WORK/animals.py"  # the VS Code picture's file (editors/test/animals.py.in)
# a user's configuration: the package, the daemon's command line, the mode in Python buffers; nothing else
cat > "$WORK/init.el" <<EOF
(add-to-list 'load-path "$ROOT/editors/emacs")
(require 'dgcomplete)
(setq dgcomplete-command '("$PY" "-m" "dgcomplete" "serve" "--log-file" "$WORK/daemon.log"))
$( [ -n "${DG_MODEL:-}" ] && echo "(setq dgcomplete-model \"$(realpath "$DG_MODEL")\")" )
(setq inhibit-startup-screen t make-backup-files nil python-indent-guess-indent-offset nil)
(add-hook 'python-mode-hook #'dgcomplete-mode)
EOF
TERM=xterm-256color tmux new-session -d -s "$SESSION" -x 90 -y 27 \
  "emacs -nw -Q -l '$WORK/init.el' '$WORK/animals.py'"
pane() { tmux capture-pane -t "$SESSION" -p; }
for _ in $(seq 300); do pane | grep -q "(Python dg " && break; sleep 0.2; done  # the mode line: model ready
pane | grep -q "(Python dg " || { echo "the model did not get ready"; pane; exit 1; }
tmux send-keys -t "$SESSION" M-g g 19 Enter C-e
sleep 0.5
tmux send-keys -t "$SESSION" Enter
for _ in $(seq 100); do [ "$(pane | sed -n 21p | tr -d ' ')" != "" ] && break; sleep 0.1; done
sleep 0.5
tmux capture-pane -t "$SESSION" -e -p > "$WORK/pane.ansi"
ghost=$(pane | sed -n 21p)
read -r cx cy < <(tmux display -p -t "$SESSION" '#{cursor_x} #{cursor_y}')
[ -n "$(echo "$ghost" | tr -d ' ')" ] || { echo "no ghost text after RET"; pane; exit 1; }
echo "ghost text: '$ghost' (cursor at column $cx, row $cy)"

# the picture: the cells as HTML (the terminal's 256 colours), the default text light, a block cursor
"$ANSI2HTML" < "$WORK/pane.ansi" > "$WORK/pane.html"
python3 - "$WORK/pane.html" "$cx" "$cy" <<'EOF'
import sys
path, x, y = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
html = open(path).read()
style = ('.body_foreground { color: #E8E8E8; } pre.ansi2html-content { font: 15px/19px "DejaVu Sans Mono", monospace;'
         ' margin: 8px; } body { margin: 0; } #cursor { position: absolute; background: #E8E8E8; mix-blend-mode: difference; }')
script = ('<script>const pre = document.querySelector("pre"); const r = pre.getBoundingClientRect();'
          'const s = document.createElement("span"); s.textContent = "M".repeat(100); pre.appendChild(s);'
          'const w = s.getBoundingClientRect().width / 100; s.remove();'
          'const t = document.createElement("span"); t.textContent = "M\\n".repeat(10) + "M"; pre.appendChild(t);'
          'const rs = t.getClientRects(); const h = (rs[rs.length - 1].top - rs[0].top) / 10; t.remove();'
          'const tw = document.createTreeWalker(pre, NodeFilter.SHOW_TEXT); const n0 = tw.nextNode();'
          'const g = document.createRange(); g.setStart(n0, 0); g.setEnd(n0, 1); const x0 = g.getBoundingClientRect().left;'
          f'const c = document.getElementById("cursor"); c.style.left = (x0 + {x} * w) + "px";'
          f'c.style.top = (r.top + {y} * h) + "px"; c.style.width = w + "px"; c.style.height = h + "px";</script>')
html = html.replace("</style>", style + "</style>").replace("</body>", '<div id="cursor"></div>' + script + "</body>")
open(path, "w").write(html)
EOF
timeout 60 "$CHROMIUM" --headless=new --no-sandbox --disable-gpu --hide-scrollbars --window-size=830,530 \
  --screenshot="$ROOT/.test-artifacts/emacs-screenshot.png" "file://$WORK/pane.html" 2>/dev/null

# TAB takes it: the saved file gains exactly the ghost text on the new line
tmux send-keys -t "$SESSION" Tab
sleep 0.3
tmux send-keys -t "$SESSION" C-x C-s
for _ in $(seq 50); do [ "$(sed -n 20p "$WORK/animals.py")" = "$ghost" ] && break; sleep 0.1; done
if [ "$(sed -n 20p "$WORK/animals.py")" != "$ghost" ]; then
  echo "TAB did not insert the ghost text: '$(sed -n 20p "$WORK/animals.py")'"; exit 1
fi
echo "TAB inserted it; picture: .test-artifacts/emacs-screenshot.png"
if [ "${UPDATE_SCREENSHOT:-}" = 1 ]; then cp "$ROOT/.test-artifacts/emacs-screenshot.png" editors/emacs/screenshot.png; fi
