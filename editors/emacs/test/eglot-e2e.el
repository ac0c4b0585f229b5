;;; eglot-e2e.el --- dgcomplete against the real daemon in a real Emacs, through eglot  -*- lexical-binding: t -*-

;; What an Emacs user gets from the daemon through eglot, Emacs's own LSP client (1.9: Debian 12's
;; elpa-eglot): eglot has no inline completion, so the daemon's one completion item, taken by
;; `completion-at-point' itself (C-M-i) and by company; and a rewrite code action, applied through the command path a client without codeAction/resolve
;; gets (the server's workspace/applyEdit, which eglot asks the user to confirm).
;;
;;   DG_PYTHON=.venv/bin/python DG_MODEL=dir-or-empty DG_WORKDIR=tmpdir DG_RESULT=out.json \
;;     emacs --batch -L editors/emacs/test -l editors/emacs/test/eglot-e2e.el
;;
;; Batch Emacs reads no init file, but site-start.d runs, so Debian's elpa packages are on the load path.

(require 'dg-e2e-common)
(require 'eglot)

(setq dg-client "eglot")
;; eglot manages python-mode buffers with the daemon: a user's `eglot-server-programs' entry
(setq eglot-server-programs
      `((python-mode . (,@(dg-server-command) :initializationOptions (:maxLines 4))))
      eglot-sync-connect 30
      eglot-connect-timeout 120)
(add-hook 'dg-finish-hook (lambda () (ignore-errors (eglot-shutdown-all))))

(defun dg-stats (server)
  (jsonrpc-request server :workspace/executeCommand '(:command "dgcomplete.stats" :arguments [])))

(defun dg-run ()
  (let (server)
    (find-file (dg-write "sample.py" dg-sample))
    (dg-check "python-mode" (derived-mode-p 'python-mode) major-mode)
    (apply #'eglot (eglot--guess-contact))
    (setq server (dg-wait #'eglot-current-server 60))
    (dg-check "eglot connected" server)
    (dg-check "completion provider" (eglot--server-capable :completionProvider))
    ;; the daemon reads the documents opened while the model loads once the load ends
    (dg-check "model loaded" (dg-wait (lambda () (plist-get (dg-stats server) :model)) 120))

    ;; "    return mess" typed at the end (the memorizer knows `return message`)
    (goto-char (point-max))
    (dg-check-completion
     #'eglot-completion-at-point
     (lambda (cand) (plist-get (get-text-property 0 'eglot--lsp-item cand) :label))
     (lambda (cand) (let ((e (plist-get (get-text-property 0 'eglot--lsp-item cand) :textEdit)))
                      (cons (plist-get (plist-get (plist-get e :range) :start) :character)
                            (plist-get e :newText)))))
    ;; (eglot 1.9 does not run an item's command, so the daemon's accept count stays as it was there)

    ;; a new line: no symbol typed, nothing to filter by
    (end-of-line)
    (insert "\n    ")
    (let ((got (dg-wait-candidates #'eglot-completion-at-point 30)))
      (dg-check "at a line's start the probe is empty and an item is offered" (equal (car got) "") got))

    ;; Repair syntax on lines 5-8 (an unclosed call): eglot 1.9 has no codeAction/resolve, so the action comes
    ;; with its command; executing it makes the server send workspace/applyEdit, which eglot applies to the
    ;; buffer once the user says yes. The text outside the lines must stay as it was.
    (find-file (dg-write "broken.py" dg-broken))
    (dg-check "broken.py managed" (dg-wait #'eglot-current-server 30))
    (let* ((before (buffer-string))
           (region (dg-region-of-lines 5 8))
           (actions (dg-wait (lambda () (eglot-code-actions (car region) (cdr region))) 30))
           (repair (cl-find-if (lambda (a) (string-match-p "Repair syntax" (plist-get a :title))) actions))
           (command (plist-get repair :command))
           (asked nil))
      (dg-check "Repair syntax listed with a command" command (mapcar (lambda (a) (plist-get a :title)) actions))
      (dg-answering-yes asked
        (eglot-execute-command server (plist-get command :command) (plist-get command :arguments))
        (dg-wait (lambda () (not (equal (buffer-string) before))) 30))
      (dg-check "eglot asked before applying the server's edit"
                (cl-some (lambda (p) (string-match-p "broken\\.py" p)) asked) asked)
      (dg-check-confined-repair before (car region) (cdr region)))))

(dg-main #'dg-run)

;;; eglot-e2e.el ends here
