;;; dg-e2e-common.el --- what the Emacs end-to-end tests share  -*- lexical-binding: t -*-

;; Environment: DG_PYTHON (the daemon's Python), DG_MODEL (a checkpoint dir, or empty for the embedded model),
;; DG_WORKDIR (where the test writes its files and the daemon its log), DG_RESULT (the JSON report).

(require 'cl-lib)
(require 'subr-x)
(require 'json)
(require 'python)
(require 'company)

(defvar dg-python (let ((p (or (getenv "DG_PYTHON") "python3")))
                    (if (file-name-directory p) (expand-file-name p) p)))
(defvar dg-model (let ((m (getenv "DG_MODEL"))) (and m (not (string-empty-p m)) (expand-file-name m))))
(defvar dg-workdir (file-name-as-directory (expand-file-name (or (getenv "DG_WORKDIR")
                                                                 (make-temp-file "dg-emacs" t)))))
(defvar dg-result (getenv "DG_RESULT"))
(defvar dg-report (list :ok :json-false :checks nil))
(defvar dg-finish-hook nil "Run before Emacs exits: shut the client's servers down.")

(defvar dg-client "emacs" "The LSP client under test, for the log lines.")

(defun dg-log (fmt &rest args)
  (message "[emacs-e2e %s] %s" dg-client (apply #'format fmt args)))

(defun dg-check (name ok &optional detail)
  "Record check NAME; stop the test when OK is nil."
  (plist-put dg-report :checks (vconcat (plist-get dg-report :checks)
                                        (list (list :name name :ok (if ok t :json-false)
                                                    :detail (format "%S" detail)))))
  (dg-log "%s %s%s" (if ok "PASS" "FAIL") name (if detail (format ": %S" detail) ""))
  (unless ok (error "check failed: %s" name)))

(defun dg-wait (pred timeout)
  "Run the event loop until PRED returns non-nil (its value) or TIMEOUT seconds pass (nil)."
  (let ((t0 (float-time)) v)
    (while (and (not (setq v (funcall pred))) (< (- (float-time) t0) timeout))
      (accept-process-output nil 0.05))
    v))

(defun dg-finish (ok err)
  (plist-put dg-report :ok (if ok t :json-false))
  (plist-put dg-report :error (and err (format "%s" err)))
  (when dg-result
    (with-temp-file dg-result (insert (json-encode dg-report))))
  (dg-log (if ok "ALL PASSED" (format "FAILED: %s" err)))
  (run-hooks 'dg-finish-hook)
  (kill-emacs (if ok 0 1)))

(defun dg-main (run)
  "Run the test RUN and end Emacs with its report (exit 0 when every check passed)."
  (condition-case err
      (progn (funcall run) (dg-finish t nil))
    (error (dg-finish nil (error-message-string err)))))

(defun dg-line ()
  "The current line's text."
  (buffer-substring-no-properties (line-beginning-position) (line-end-position)))

(defun dg-write (name text)
  (let ((path (concat dg-workdir name)))
    (with-temp-file path (insert text))
    path))

(defun dg-capf-candidates (capf)
  "What a frontend listing candidates (company, corfu) gets at point from the `completion-at-point' function
CAPF: the typed symbol it filters by and the candidates `all-completions' keeps for it."
  (let* ((res (funcall capf))
         (probe (and res (buffer-substring-no-properties (nth 0 res) (nth 1 res)))))
    (list probe (and res (all-completions probe (nth 2 res))))))

(defun dg-wait-candidates (capf timeout)
  "`dg-capf-candidates' once it has some (the model answers in its own time), or nil after TIMEOUT seconds."
  (dg-wait (lambda () (let ((c (dg-capf-candidates capf))) (and (cadr c) c))) timeout))

(defun dg-company-take ()
  "Complete at point with company (company-capf, the client's `completion-at-point' function), taking the
first candidate as RET does: company inserts it and runs the exit function with `finished', where a client puts
the item's textEdit and runs its command. Returns the candidates company listed."
  (company-mode 1)
  (let ((company-backends '(company-capf))
        (company-frontends nil)  ; nothing drawn in batch: the candidates and the pick are what is tested
        cands)
    (company-manual-begin)
    (setq cands company-candidates)
    (company-complete-selection)
    cands))

(defun dg-retype-line (text)
  "Replace the current line by TEXT, point at its end, as if typed again."
  (delete-region (line-beginning-position) (line-end-position))
  (insert text))

(defun dg-check-completion (capf label-of text-edit-of)
  "The completion item for \"    return mess\" typed on the current (last) line, through CAPF: listed for the typed
symbol, taken by C-M-i (which inserts the label, the item's first line) and by company (its textEdit).
LABEL-OF and TEXT-EDIT-OF read a candidate's label and textEdit (start column, newText)."
  (dg-retype-line "    return mess")
  (let* ((got (dg-wait-candidates capf 60))
         (cands (cadr got)))
    (dg-check "the typed symbol is the probe" (equal (car got) "mess") got)
    (dg-check "one item survives the typed symbol's filter" (= (length cands) 1) cands)
    (let* ((cand (car cands))
           (label (funcall label-of cand))
           (edit (funcall text-edit-of cand))
           (expected (concat (substring "    return mess" 0 (car edit)) (cdr edit))))
      (plist-put dg-report :label label)
      (plist-put dg-report :new-text (cdr edit))
      (dg-check "the label starts with the typed symbol" (string-prefix-p "mess" label) label)
      (dg-check "the label is the first line of what the item inserts"
                (equal label (car (split-string (cdr edit) "\n"))) (list label (cdr edit)))
      ;; M-x completion-at-point (C-M-i), no frontend: one candidate, inserted as its string (the label)
      (completion-at-point)
      (dg-check "C-M-i inserts the suggestion's first line"
                (equal (dg-line) (car (split-string expected "\n")))
                (dg-line))
      ;; company lists it and RET takes it: the item's textEdit
      (dg-retype-line "    return mess")
      (let ((line-start (line-beginning-position)))
        (dg-wait-candidates capf 60)
        (dg-check "company lists the item" (= (length (dg-company-take)) 1))
        (dg-check "company's pick inserts the item's textEdit"
                  (equal (buffer-substring-no-properties line-start (point)) expected)
                  (list (buffer-substring-no-properties line-start (point)) expected))))))

(defun dg-server-command ()
  "The daemon's command line, as a user's configuration would give it (plus its log file)."
  `(,dg-python "-m" "dgcomplete" "serve" ,@(when dg-model (list "--model" dg-model))
               "--log-file" ,(concat dg-workdir "daemon.log")))

(defconst dg-sample (concat "def add(a, b):\n    return a + b\n\n\n"
                            "def greet(name):\n    message = \"hello \" + name\n    print(message)\n")
  "A file the test memorizer has seen (tests/helpers.py MEMO_TEXT).")

(defconst dg-broken (concat "def add(a, b):\n    return a + b\n\n\n"
                            "def greet(name):\n    message = \"hello \" + name\n"
                            "    print(message\n    return message\n")
  "The sample with an unclosed call on line 7: what Repair syntax is asked to mend (lines 5-8).")

(defun dg-parses-p (text)
  "Whether Python parses TEXT (the daemon's interpreter decides)."
  (with-temp-buffer
    (insert text)
    (zerop (call-process-region (point-min) (point-max) dg-python nil nil nil
                                "-c" "import ast, sys; ast.parse(sys.stdin.read())"))))

(defun dg-region-of-lines (first last)
  "Buffer positions from the start of line FIRST to the end of line LAST (1-based)."
  (save-excursion
    (goto-char (point-min)) (forward-line (1- first))
    (let ((beg (point)))
      (forward-line (- last first)) (cons beg (line-end-position)))))

(defun dg-check-confined-repair (before beg end)
  "The buffer after a repair of BEFORE's region BEG..END: changed, the same outside it, and parsing."
  (let ((after (buffer-string)))
    (dg-check "the repair changed the buffer" (not (equal after before)))
    (dg-check "outside the selection unchanged"
              (and (string-prefix-p (substring before 0 (1- beg)) after)
                   (string-suffix-p (substring before (1- end)) after))
              after)
    (dg-check "the repaired file parses" (dg-parses-p after) after)
    (plist-put dg-report :repaired after)))

(defmacro dg-answering-yes (asked &rest body)
  "Run BODY answering y to every `y-or-n-p' (as the user would), their prompts pushed to ASKED."
  (declare (indent 1))
  (let ((answer (make-symbol "answer")))
    `(let ((,answer (lambda (prompt &rest _) (push prompt ,asked) t)))
       (advice-add 'y-or-n-p :override ,answer)
       (unwind-protect (progn ,@body)
         (advice-remove 'y-or-n-p ,answer)))))

(setq make-backup-files nil
      create-lockfiles nil
      python-indent-guess-indent-offset nil)
(add-hook 'project-find-functions (lambda (_dir) (cons 'transient dg-workdir)))

(provide 'dg-e2e-common)
;;; dg-e2e-common.el ends here
