;;; ghost-e2e.el --- dgcomplete.el's ghost text against the real daemon, in a real Emacs  -*- lexical-binding: t -*-

;; `dgcomplete-mode' (editors/emacs/dgcomplete.el) in batch Emacs, typed through the command loop
;; (`execute-kbd-macro'): the ghost text appears at point after typing, TAB inserts exactly it and the daemon
;; counts the accept, C-<right> takes a word at a time with the rest still shown, a multi-line suggestion shows
;; and inserts whole, moving point hides it, and the daemon's copy of the buffer follows edits with characters
;; outside the BMP (the item's range starts where the typed word starts in Emacs's buffer); Repair syntax on a
;; region applied through the daemon's workspace/applyEdit, and a stale edit refused.
;;
;;   DG_PYTHON=.venv/bin/python DG_MODEL=dir-or-empty DG_WORKDIR=tmpdir DG_RESULT=out.json \
;;     emacs --batch -L editors/emacs -L editors/emacs/test -l editors/emacs/test/ghost-e2e.el

(require 'dg-e2e-common)
(require 'dgcomplete)

(setq dg-client "dgcomplete.el")
(setq dgcomplete-command (dg-server-command)
      dgcomplete-settings '(:maxLines 4))
(add-hook 'dg-finish-hook #'dgcomplete-shutdown)

(defun dg-type (keys)
  "Type KEYS through the command loop (commands, their hooks and the mode's keymaps run as for a user)."
  (execute-kbd-macro (kbd keys)))

(defun dg-show-item (text start &optional end)
  "Show a made-up item replacing START..END (point unless given) with TEXT (the rendering and keys, whatever the
model says)."
  (setq dgcomplete--items (cons (list (list :insertText text
                                            :range (list :start (dgcomplete--position start)
                                                         :end (dgcomplete--position (or end (point))))))
                                      0))
  (dgcomplete--show))

(defun dg-run ()
  (find-file (dg-write "sample.py" dg-sample))
  (dgcomplete-mode 1)
  (dg-check "dgcomplete-mode on, daemon started" (and dgcomplete-mode (jsonrpc-running-p dgcomplete--connection)))
  (dg-check "model loaded" (dg-wait (lambda () (plist-get (dgcomplete-stats) :model)) 120))
  (dg-check "the mode line says ready" (equal (dg-wait (lambda () (and (eq dgcomplete--status 'ready)
                                                                          (dgcomplete--lighter)))
                                                       30)
                                              " dg")
            dgcomplete--status)
  (dg-check "the project is the daemon's workspace folder"
            (dg-wait (lambda () (let ((w (format "%S" (plist-get (dgcomplete-stats) :workspace))))
                                  (and (string-match-p (regexp-quote (directory-file-name dg-workdir)) w) w)))
                     30)
            (plist-get (dgcomplete-stats) :workspace))

  ;; typed through the command loop at the end: the memorizer knows `return message`
  (goto-char (point-max))
  (dg-type "SPC SPC SPC SPC r e t u r n SPC m e s s")
  (dg-check "typed" (equal (dg-line) "    return mess") (dg-line))
  (let ((ghost (dg-wait #'dgcomplete-ghost-text 60))
        (item (dgcomplete--item)))
    (dg-check "ghost text appears" ghost)
    (dg-check "drawn at point" (= (overlay-start dgcomplete--overlay) (point)))
    (dg-check "drawn as the rest of the item's text"
              (equal (concat (dg-line) ghost)
                     (concat (buffer-substring-no-properties (line-beginning-position)
                                                             (dgcomplete--point-at (plist-get (plist-get item :range) :start)))
                             (plist-get item :insertText)))
              (list ghost item))
    (plist-put dg-report :ghost ghost)
    ;; typing what it says keeps the rest on screen at once (no waiting for the daemon), anything else hides it
    (dg-type (substring ghost 0 1))
    (dg-check "typed through: the rest stays shown at once" (equal (dgcomplete-ghost-text) (substring ghost 1))
              (dgcomplete-ghost-text))
    (dg-wait (lambda () (and (null dgcomplete--timer) (null dgcomplete--request))) 60)  ; the daemon answered
    (setq ghost (or (dgcomplete-ghost-text) ""))
    (dg-check "and after the daemon's answer to that keystroke" (> (length ghost) 0))
    (let ((accepted (or (plist-get (dgcomplete-stats) :accepted) 0))
          (want (concat (dg-line) ghost)))
      (dg-type "TAB")
      (dg-check "TAB inserts exactly the ghost text" (equal (dg-line) want) (list (dg-line) want))
      (dg-check "point after it" (= (point) (line-end-position)))
      (dg-check "the daemon counted the accept"
                (dg-wait (lambda () (> (or (plist-get (dgcomplete-stats) :accepted) 0) accepted)) 15))))

  ;; TAB without ghost text does what it did before (python-mode indents)
  (dg-type "RET")
  (dgcomplete--clear)
  (dg-check "TAB falls through without ghost text" (eq (key-binding (kbd "TAB")) 'indent-for-tab-command)
            (key-binding (kbd "TAB")))
  (delete-region (line-beginning-position) (line-end-position))

  ;; C-<right> a word at a time, the rest still shown; M-f likewise; TAB the rest
  (insert "    total = comp")
  (dg-show-item "compute(a, b) + 1" (- (point) 4))
  (dg-check "one-line render" (equal (dgcomplete-ghost-text) "ute(a, b) + 1") (dgcomplete-ghost-text))
  (dg-type "C-<right>")
  (dg-check "C-<right> inserts the next word" (equal (dg-line) "    total = compute") (dg-line))
  (dg-check "the rest stays shown" (equal (dgcomplete-ghost-text) "(a, b) + 1") (dgcomplete-ghost-text))
  (dg-type "M-f")
  (dg-check "M-f: the punctuation, then the name" (and (equal (dg-line) "    total = compute(a")
                                                     (equal (dgcomplete-ghost-text) ", b) + 1"))
            (list (dg-line) (dgcomplete-ghost-text)))
  (dg-type "TAB")
  (dg-check "TAB then inserts the rest" (equal (dg-line) "    total = compute(a, b) + 1") (dg-line))

  ;; the editor's closer right of point, which the item writes too: drawn around it, not twice; C-<right> stops short
  ;; of it, and a word that reaches it takes the rest (the range's edit)
  (dg-type "RET")
  (delete-region (line-beginning-position) (line-end-position))
  (insert "    total = compute()")
  (backward-char 1)
  (dg-show-item "compute(a, b) + 1" (- (point) 8) (1+ (point)))
  (dg-check "the ghost is what accepting adds" (equal (dgcomplete-ghost-text) "a, b + 1") (dgcomplete-ghost-text))
  (dg-check "drawn around the closer"
            (and (equal (overlay-get dgcomplete--overlay 'after-string) "a, b")
                 (= (length dgcomplete--more-overlays) 1)
                 (= (overlay-start (car dgcomplete--more-overlays)) (1+ (point)))
                 (equal (overlay-get (car dgcomplete--more-overlays) 'after-string) " + 1"))
            (list (overlay-get dgcomplete--overlay 'after-string) (mapcar (lambda (o) (overlay-get o 'after-string))
                                                                        dgcomplete--more-overlays)))
  (dg-type "C-<right>")
  (dg-check "C-<right> before the closer" (equal (dg-line) "    total = compute(a)") (dg-line))
  (dg-type "C-<right>")
  (dg-type "C-<right>")
  (dg-check "a word past the closer takes the rest" (equal (dg-line) "    total = compute(a, b) + 1") (dg-line))
  (end-of-line)

  ;; an edit inside a written line: the item goes in at point, before the rest of the line
  (dg-type "RET")
  (delete-region (line-beginning-position) (line-end-position))
  (insert "    q, r = divmod(, divisor)  # both parts")
  (search-backward ", divisor)")
  (dg-show-item "value" (point) (point))
  (dg-check "drawn at point, before the rest of the line"
            (and (equal (dgcomplete-ghost-text) "value") (= (overlay-start dgcomplete--overlay) (point))
                 (equal (overlay-get dgcomplete--overlay 'after-string) "value") (null dgcomplete--more-overlays))
            (list (dgcomplete-ghost-text) (overlay-get dgcomplete--overlay 'after-string)))
  (dg-type "TAB")
  (dg-check "TAB puts it in before the rest of the line"
            (and (equal (dg-line) "    q, r = divmod(value, divisor)  # both parts") (looking-at-p ", divisor)"))
            (dg-line))
  (end-of-line)

  ;; a multi-line suggestion: first line inline, the rest below; TAB inserts all of it
  (dg-type "RET")
  (delete-region (line-beginning-position) (line-end-position))
  (insert "    if x")
  (dg-show-item "if x:\n        pass\n    y = 1" (- (point) 4))
  (dg-check "multi-line render" (equal (dgcomplete-ghost-text) ":\n        pass\n    y = 1") (dgcomplete-ghost-text))
  (let ((row (line-number-at-pos)))
    (dg-type "TAB")
    (dg-check "multi-line text inserted"
              (equal (buffer-substring-no-properties (save-excursion (goto-char (point-min)) (forward-line (1- row)) (point))
                                                     (point))
                     "    if x:\n        pass\n    y = 1")))

  ;; moving point hides it, and so does dgcomplete-dismiss (C-g)
  (dg-type "RET")
  (insert "    z = comp")
  (dg-show-item "compute()" (- (point) 4))
  (dg-type "x")
  (dg-check "typing something else hides it at once" (null (dgcomplete-ghost-text)))
  (dg-type "DEL")
  (dg-show-item "compute()" (- (point) 4))
  (dg-type "C-b")
  (dg-check "moving point hides the ghost text" (null (dgcomplete-ghost-text)))
  (dg-type "C-f")
  (dg-show-item "compute()" (- (point) 4))
  (dgcomplete-dismiss)
  (dg-check "dgcomplete-dismiss hides it" (null (dgcomplete-ghost-text)))
  (delete-region (line-beginning-position) (line-end-position))

  ;; the daemon's copy follows: characters outside the BMP (two UTF-16 units) and a deletion before the cursor
  ;; on the line, then an explicit request; the item's range must start where `mess' starts here
  (insert "    s = \"é😀😀\" + messx")
  (dg-type "DEL")
  (let ((word-start (- (point) 4)))
    (dgcomplete-complete)
    (dg-check "an answer after the edits" (dg-wait #'dgcomplete--item 60))
    (let ((start (dgcomplete--point-at (plist-get (plist-get (dgcomplete--item) :range) :start))))
      (dg-check "the daemon's copy agrees (the item starts at the typed word)" (= start word-start)
                (list start word-start (dgcomplete--item)))))

  ;; Repair syntax on lines 5-8 of a file with an unclosed call: the daemon sends workspace/applyEdit for the
  ;; buffer's version, which is applied; the text outside the lines stays as it was
  (find-file (dg-write "broken.py" dg-broken))
  (dgcomplete-mode 1)
  (let* ((before (buffer-string)) (region (dg-region-of-lines 5 8))
         (result (dgcomplete-repair-region (car region) (cdr region))))
    (dg-check "Repair syntax applied" (eq (plist-get result :applied) t) result)
    (dg-check-confined-repair before (car region) (cdr region)))
  ;; an edit for a version the buffer has left is refused
  (dg-check "a stale edit is refused"
            (equal (plist-get (dgcomplete--apply-edit
                               (list :documentChanges
                                     (vector (list :textDocument (list :uri (dgcomplete--uri)
                                                                       :version (1- dgcomplete--version))
                                                   :edits (vector (list :range (list :start '(:line 0 :character 0)
                                                                                     :end '(:line 0 :character 0))
                                                                        :newText "x"))))))
                              :applied)
                   :json-false))
  (dg-check "and leaves the buffer alone" (not (string-prefix-p "x" (buffer-string))))
  (find-file (concat dg-workdir "sample.py"))

  ;; a file renamed: the next change gives the daemon the buffer under its new name (asked there, it answers)
  (set-visited-file-name (concat dg-workdir "renamed.py") t)
  (goto-char (point-max))
  (insert "\n")
  (dg-check "a renamed file: the daemon has it under the new name"
            (listp (jsonrpc-request dgcomplete--connection :textDocument/inlineCompletion
                                    (list :textDocument (list :uri (dgcomplete--uri))
                                          :position (dgcomplete--position (point))
                                          :context '(:triggerKind 1))))
            (dgcomplete--uri))
  (set-visited-file-name (concat dg-workdir "sample.py") t)

  ;; a daemon that died is started again on the next change, with the whole buffer
  (dgcomplete-shutdown)
  (insert "\n")
  (dg-check "a new daemon has the buffer after a restart" (and (jsonrpc-running-p dgcomplete--connection)
                                                              (memq (current-buffer) dgcomplete--buffers)))

  ;; through a relay to a shared daemon (`serve --shared'), which reports its load only as progress: the mode
  ;; line says ready and ghost text comes (the daemon, on a socket of the work folder, exits when idle)
  (dgcomplete-shutdown)
  (let ((dgcomplete-command (append (dg-server-command)
                                    (list "--shared" "--socket" (concat dg-workdir "shared.sock") "--idle-exit" "0.05")))
        (dgcomplete--status nil))
    (dgcomplete--connection)
    (dg-check "through a shared daemon: the mode line says ready"
              (eq (dg-wait (lambda () (and (memq dgcomplete--status '(ready error)) dgcomplete--status)) 120) 'ready)
              dgcomplete--status)
    (find-file (dg-write "shared.py" dg-sample))  ; the text the memorizer knows, as at the start
    (dgcomplete-mode 1)
    (goto-char (point-max))
    (dg-type "SPC SPC SPC SPC r e t u r n SPC m e s s")
    (dg-check "through a shared daemon: ghost text" (dg-wait #'dgcomplete-ghost-text 60))
    (dgcomplete-mode -1)
    (dgcomplete-shutdown)
    (find-file (concat dg-workdir "sample.py")))

  ;; a model that cannot be loaded: the mode line says so (and the daemon's message is shown)
  (dgcomplete-shutdown)
  (let ((dgcomplete-model (concat dg-workdir "no-such-model")))
    (dgcomplete--connection)
    (dg-check "the mode line says the model failed"
              (equal (dg-wait (lambda () (and (eq dgcomplete--status 'error) (dgcomplete--lighter))) 60) " dg!")
              dgcomplete--status))
  (dgcomplete-shutdown)

  ;; a daemon that cannot be started again: the next change turns the mode off, says why, and the edit stands
  (let ((dgcomplete-command '("/nonexistent/dgcomplete" "serve")))
    (dg-type "x")
    (dg-check "no daemon to start: the mode turns itself off, the edit stands"
              (and (not dgcomplete-mode) (eq (char-before) ?x)) dgcomplete-mode))
  (dgcomplete-mode 1)
  (dg-check "on again: a daemon again" (jsonrpc-running-p dgcomplete--connection))

  ;; turning the mode off with the daemon gone starts none just to say goodbye
  (dgcomplete-shutdown)
  (dgcomplete-mode -1)
  (dg-check "mode off: no ghost text, hooks gone, no daemon started for it"
            (and (null (dgcomplete-ghost-text))
                 (not (memq #'dgcomplete--after-change after-change-functions))
                 (null dgcomplete--connection))))

(dg-main #'dg-run)

;;; ghost-e2e.el ends here
