;;; lsp-mode-e2e.el --- dgcomplete against the real daemon in a real Emacs, through lsp-mode  -*- lexical-binding: t -*-

;; What an Emacs user gets through lsp-mode 8.0 (Debian 12's elpa-lsp-mode, before lsp-mode's inline
;; completion), with dgcomplete registered as an add-on server as editors/README.md says: the completion item
;; in `lsp-completion-at-point' (listed for the typed symbol, taken by C-M-i and by company, its command run), and a rewrite
;; code action, resolved (codeAction/resolve) and applied by `lsp-execute-code-action'.
;;
;;   DG_PYTHON=.venv/bin/python DG_MODEL=dir-or-empty DG_WORKDIR=tmpdir DG_RESULT=out.json \
;;     emacs --batch -L editors/emacs/test -l editors/emacs/test/lsp-mode-e2e.el

(require 'dg-e2e-common)
(require 'lsp-mode)
(require 'lsp-completion)
(require 'lsp-modeline)

(setq dg-client "lsp-mode")
(setq lsp-session-file (concat dg-workdir "lsp-session")
      lsp-auto-guess-root t
      lsp-enable-file-watchers nil
      lsp-keep-workspace-alive nil
      lsp-restart 'ignore
      lsp-enable-snippet nil
      lsp-headerline-breadcrumb-enable nil
      lsp-modeline-code-actions-enable nil
      lsp-modeline-diagnostics-enable nil
      lsp-enable-on-type-formatting nil
      lsp-completion-provider :none
      lsp-log-io nil)
;; the registration editors/README.md gives lsp-mode users (an add-on next to the language's own server)
(lsp-register-client
 (make-lsp-client
  :new-connection (lsp-stdio-connection (dg-server-command))
  :activation-fn (lsp-activate-on "python")
  :server-id 'dgcomplete
  :add-on? t
  :priority -1
  :initialization-options (lambda () '(:dgcomplete (:maxLines 4)))))
;; only dgcomplete: no other Python server is installed here, and lsp-mode would offer to install one
(setq lsp-disabled-clients '(pyls pylsp mspyls pyright jedi ruff-lsp semgrep-ls))
(add-hook 'dg-finish-hook (lambda () (ignore-errors (lsp-workspace-shutdown (car (lsp-workspaces))))))

(defun dg-stats ()
  (let ((r (lsp-request "workspace/executeCommand" '(:command "dgcomplete.stats" :arguments []))))
    (if (hash-table-p r) r (make-hash-table))))

(defun dg-run ()
  (find-file (dg-write "sample.py" dg-sample))
  (dg-check "python-mode" (derived-mode-p 'python-mode) major-mode)
  (lsp)
  (dg-check "lsp-mode started dgcomplete"
            (dg-wait (lambda () (cl-some (lambda (w) (and (eq (lsp--workspace-status w) 'initialized) w))
                                         (lsp-workspaces)))
                     60)
            (mapcar #'lsp--workspace-print (lsp-workspaces)))
  (dg-check "model loaded" (dg-wait (lambda () (gethash "model" (dg-stats))) 120))
  (let ((accepted-before (or (gethash "accepted" (dg-stats)) 0))
        (item-of (lambda (cand) (get-text-property 0 'lsp-completion-item cand))))
    (goto-char (point-max))
    (dg-retype-line "    return mess")
    (let ((cands (cadr (dg-wait-candidates #'lsp-completion-at-point 60))))
      (dg-check "the item's text is kept as written (insertTextMode asIs: lsp-mode re-indents the lines of others)"
                (and cands (eql (gethash "insertTextMode" (funcall item-of (car cands))) 1)) cands))
    (dg-check-completion
     #'lsp-completion-at-point
     (lambda (cand) (gethash "label" (funcall item-of cand)))
     (lambda (cand) (let ((e (gethash "textEdit" (funcall item-of cand))))
                      (cons (gethash "character" (gethash "start" (gethash "range" e))) (gethash "newText" e)))))
    (dg-check "company's pick ran the item's command (the server counted the accept)"
              (dg-wait (lambda () (> (or (gethash "accepted" (dg-stats)) 0) accepted-before)) 15)))

  ;; Repair syntax on lines 5-8: lsp-mode resolves the action (the model runs then) and applies its edit
  (find-file (dg-write "broken.py" dg-broken))
  (lsp)
  (dg-check "broken.py managed" (dg-wait (lambda () (lsp-workspaces)) 30))
  (let* ((before (buffer-string))
         (region (dg-region-of-lines 5 8))
         (actions (progn (transient-mark-mode 1) (goto-char (car region)) (push-mark (cdr region) t t)
                         (dg-wait (lambda () (append (lsp-code-actions-at-point) nil)) 30)))
         (repair (cl-find-if (lambda (a) (string-match-p "Repair syntax" (gethash "title" a))) actions))
         (asked nil))
    (dg-check "Repair syntax listed, to be resolved" (and repair (not (gethash "edit" repair)))
              (mapcar (lambda (a) (gethash "title" a)) actions))
    (deactivate-mark)
    (dg-answering-yes asked
      (lsp-execute-code-action repair)
      (dg-wait (lambda () (not (equal (buffer-string) before))) 30))
    (dg-check-confined-repair before (car region) (cdr region))))

(dg-main #'dg-run)

;;; lsp-mode-e2e.el ends here
