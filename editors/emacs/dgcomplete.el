;;; dgcomplete.el --- Ghost text from the dgcomplete daemon  -*- lexical-binding: t -*-

;; Version: 0.1
;; Package-Requires: ((emacs "28.1"))
;; Keywords: convenience, completion

;;; Commentary:

;; `dgcomplete-mode' shows the dgcomplete daemon's inline completions as ghost text, beside whatever LSP client
;; the buffer already uses (eglot, lsp-mode or none): like the Neovim plugin, it runs its own connection to
;; `dgcomplete serve' (one per Emacs, over stdio, Emacs's built-in jsonrpc), keeps the daemon's copy of each
;; buffer current with incremental `didChange's, and after each change asks `textDocument/inlineCompletion' for
;; the point (a short delay, the previous request cancelled, an answer for another text or point dropped).
;;
;;   (add-to-list 'load-path "/path/to/dgcomplete/editors/emacs")
;;   (require 'dgcomplete)
;;   (setq dgcomplete-command '("/path/to/dgcomplete/.venv/bin/dgcomplete" "serve"))
;;   (add-hook 'prog-mode-hook #'dgcomplete-mode)
;;
;; While ghost text shows: TAB accepts it, C-<right> or M-f its next word, C-g (or moving away) dismisses it;
;; M-x dgcomplete-complete asks explicitly (Invoked: up to three candidates, M-] / M-[ cycle them).
;; M-x dgcomplete-repair-region, dgcomplete-rewrite-region and dgcomplete-fill-holes edit the region only.

;;; Code:

(require 'cl-lib)
(require 'jsonrpc)
(require 'project)
(require 'subr-x)
(require 'url-util)

(defgroup dgcomplete nil
  "Ghost text from the dgcomplete code-completion daemon."
  :group 'completion
  :prefix "dgcomplete-")

(defcustom dgcomplete-command '("dgcomplete" "serve")
  "The daemon's command line (`dgcomplete serve --shared' relays to one daemon shared by every editor)."
  :type '(repeat string))

(defcustom dgcomplete-model nil
  "A checkpoint directory for the daemon (`--model'); nil: the model shipped with it."
  :type '(choice (const :tag "Embedded model" nil) directory))

(defcustom dgcomplete-settings nil
  "Server settings, sent as `initializationOptions' (camelCase keys: maxLines, minConfidence, ...)."
  :type 'plist)

(defcustom dgcomplete-delay 0.15
  "Seconds after a change before the daemon is asked (a newer change restarts the wait)."
  :type 'number)

(defcustom dgcomplete-language-ids
  '((python-mode . "python") (python-ts-mode . "python") (js-mode . "javascript") (js-ts-mode . "javascript")
    (typescript-mode . "typescript") (typescript-ts-mode . "typescript") (tsx-ts-mode . "typescriptreact")
    (go-mode . "go") (go-ts-mode . "go") (rust-mode . "rust") (rust-ts-mode . "rust") (java-mode . "java")
    (java-ts-mode . "java") (c-mode . "c") (c-ts-mode . "c") (c++-mode . "cpp") (c++-ts-mode . "cpp")
    (lua-mode . "lua") (sh-mode . "shellscript") (bash-ts-mode . "shellscript") (json-mode . "json")
    (js-json-mode . "json") (ruby-mode . "ruby") (ruby-ts-mode . "ruby") (php-mode . "php"))
  "LSP languageIds by major mode; another mode sends its name without `-mode' (the daemon then reads the file
by its extension)."
  :type '(alist :key-type symbol :value-type string))

(defface dgcomplete-ghost '((t :inherit shadow))
  "The ghost text.")

(defvar dgcomplete-mode)
(defvar dgcomplete--connection nil "The connection to the daemon, shared by every buffer.")
(defvar dgcomplete--buffers nil "Buffers whose text the daemon has (didOpen sent).")
(defvar dgcomplete--folders nil "Project roots the daemon was given as workspace folders (it reads their files).")
(defvar dgcomplete--status nil "The daemon's model: `loading', `ready' or `error' (the mode line shows it).")

(defvar-local dgcomplete--version 0)
(defvar-local dgcomplete--sent-uri nil "The URI the daemon has this buffer under (a renamed file gets a new one).")
(defvar-local dgcomplete--before nil "The range a change is about to replace, in LSP positions.")
(defvar-local dgcomplete--timer nil)
(defvar-local dgcomplete--request nil "The id of the request in flight.")
(defvar-local dgcomplete--overlay nil)
(defvar-local dgcomplete--more-overlays nil)  ; the ghost's pieces after the closers it writes over
(defvar-local dgcomplete--items nil "The items of the last answer, and which one shows (a cons).")
(defvar-local dgcomplete--keep nil "Non-nil while our own command edits the buffer: the ghost text stays.")

(defvar dgcomplete-active-map
  (let ((m (make-sparse-keymap)))
    (define-key m (kbd "TAB") #'dgcomplete-accept)
    (define-key m (kbd "<tab>") #'dgcomplete-accept)
    (define-key m (kbd "C-<right>") #'dgcomplete-accept-word)
    (define-key m (kbd "M-f") #'dgcomplete-accept-word)
    (define-key m (kbd "M-]") #'dgcomplete-next)
    (define-key m (kbd "M-[") #'dgcomplete-previous)
    m)
  "Keys while ghost text shows (they fall through to their usual commands otherwise).")

(define-minor-mode dgcomplete--ghost-mode
  "Internal: on while ghost text shows, so that `dgcomplete-active-map' takes its keys."
  :keymap dgcomplete-active-map)

;; ---- positions and the daemon's copy of the buffer ----------------------------------------------------------
(defun dgcomplete--position (pos)
  "POS as an LSP position: 0-based line, UTF-16 code units into the line."
  (save-excursion
    (save-restriction
      (widen)
      (goto-char pos)
      (list :line (1- (line-number-at-pos pos t))
            :character (/ (length (encode-coding-string
                                   (buffer-substring-no-properties (line-beginning-position) pos) 'utf-16le))
                          2)))))

(defun dgcomplete--point-at (position)
  "The buffer position of the LSP POSITION (a plist :line :character, UTF-16 code units)."
  (save-excursion
    (save-restriction
      (widen)
      (goto-char (point-min))
      (forward-line (plist-get position :line))
      (let ((units 0) (col (plist-get position :character)))
        (while (and (< units col) (< (point) (line-end-position)))
          (setq units (+ units (if (> (char-after) #xFFFF) 2 1)))
          (forward-char))
        (point)))))

(defun dgcomplete--region-of (range)
  "The buffer positions (start . end) of the LSP RANGE."
  (cons (dgcomplete--point-at (plist-get range :start)) (dgcomplete--point-at (plist-get range :end))))

(defun dgcomplete--uri ()
  (if buffer-file-name
      (concat "file://" (url-hexify-string (expand-file-name buffer-file-name) url-path-allowed-chars))
    (concat "untitled:" (url-hexify-string (buffer-name)))))

(defun dgcomplete--language-id ()
  (or (alist-get major-mode dgcomplete-language-ids)
      (string-remove-suffix "-ts" (string-remove-suffix "-mode" (symbol-name major-mode)))))

(defun dgcomplete--text ()
  (save-restriction (widen) (buffer-substring-no-properties (point-min) (point-max))))

(defun dgcomplete--doc () (list :uri (dgcomplete--uri)))

(defun dgcomplete--notify (method params)
  "Send a notification if the daemon runs (closing a buffer does not start one)."
  (when (and dgcomplete--connection (jsonrpc-running-p dgcomplete--connection))
    (jsonrpc-notify dgcomplete--connection method params)))

(defun dgcomplete--add-folder ()
  "Give the daemon the buffer's project as a workspace folder, once: lines retrieved from the project's other
files are where most right suggestions come from."
  (when-let* ((project (and (fboundp 'project-current) (project-current nil)))
              (root (directory-file-name (expand-file-name (project-root project))))
              (uri (concat "file://" (url-hexify-string root url-path-allowed-chars))))
    (unless (member uri dgcomplete--folders)
      (push uri dgcomplete--folders)
      (dgcomplete--notify :workspace/didChangeWorkspaceFolders
                          (list :event (list :added (vector (list :uri uri :name (file-name-nondirectory root)))
                                             :removed []))))))

(defun dgcomplete--open ()
  "Give the daemon (started if need be) the buffer's whole text."
  (dgcomplete--connection)
  (dgcomplete--add-folder)
  (cl-incf dgcomplete--version)
  (setq dgcomplete--sent-uri (dgcomplete--uri))
  (dgcomplete--notify :textDocument/didOpen
                      (list :textDocument (list :uri (dgcomplete--uri) :languageId (dgcomplete--language-id)
                                                :version dgcomplete--version :text (dgcomplete--text))))
  (cl-pushnew (current-buffer) dgcomplete--buffers))

(defun dgcomplete--close ()
  (when (memq (current-buffer) dgcomplete--buffers)
    (setq dgcomplete--buffers (delq (current-buffer) dgcomplete--buffers))
    (ignore-errors (dgcomplete--notify :textDocument/didClose
                                       (list :textDocument (list :uri (or dgcomplete--sent-uri (dgcomplete--uri))))))))

(defun dgcomplete--known-p ()
  "Whether the running daemon has this buffer, under its current URI."
  (and (memq (current-buffer) dgcomplete--buffers) dgcomplete--connection (jsonrpc-running-p dgcomplete--connection)
       (equal dgcomplete--sent-uri (dgcomplete--uri))))

(defun dgcomplete--ensure-known ()
  "Give the daemon the whole buffer unless it has it under its current URI (a daemon started again, a file
renamed: closed under its old name first); non-nil when it had it already."
  (or (dgcomplete--known-p)
      (progn (dgcomplete--close) (dgcomplete--open) nil)))

(defun dgcomplete--before-change (beg end)
  (save-restriction
    (widen)
    (setq dgcomplete--before (list beg end (dgcomplete--position beg) (dgcomplete--position end)))))

(defun dgcomplete--after-change (beg end len)
  "Send the change: as a range when the change is the one announced before it, else the whole text (a daemon
started again since, or a file renamed, gets the whole buffer; if no daemon can be started, the mode turns itself
off and says why)."
  (condition-case err
      (progn
        (when (dgcomplete--ensure-known)
          (dgcomplete--send-change beg end len))
        (unless dgcomplete--keep
          ;; typed through: characters that the ghost text goes on with keep the rest on screen until the answer
          ;; to this change comes (no flicker); anything else hides it now
          (let ((item (dgcomplete--item)))
            (dgcomplete--clear-overlay)
            (if (and item (zerop len) (> end beg) (= end (point)) (dgcomplete--parts item))
                (dgcomplete--show)
              (setq dgcomplete--items nil)))
          (dgcomplete--schedule)))
    (error (dgcomplete-mode -1)
           (message "dgcomplete: off in %s: %s" (buffer-name) (error-message-string err)))))

(defun dgcomplete--send-change (beg end len)
  (cl-incf dgcomplete--version)
  (let* ((b dgcomplete--before)
         (change (save-restriction
                   (widen)
                   (if (and b (= (nth 0 b) beg) (= (- (nth 1 b) (nth 0 b)) len))
                       (list :range (list :start (nth 2 b) :end (nth 3 b))
                             :text (buffer-substring-no-properties beg end))
                     (list :text (dgcomplete--text))))))
    (setq dgcomplete--before nil)
    (dgcomplete--notify :textDocument/didChange
                        (list :textDocument (list :uri (dgcomplete--uri) :version dgcomplete--version)
                              :contentChanges (vector change)))))

;; ---- the connection -----------------------------------------------------------------------------------------
(defun dgcomplete--connection ()
  "The live connection to the daemon, started (and initialized) on first use."
  (unless (and dgcomplete--connection (jsonrpc-running-p dgcomplete--connection))
    (setq dgcomplete--connection nil dgcomplete--buffers nil dgcomplete--folders nil)
    (let* ((command (append dgcomplete-command (and dgcomplete-model (list "--model" dgcomplete-model))))
           (_ (unless (executable-find (car command))
                (error "Cannot find %s (set `dgcomplete-command')" (car command))))
           (proc (make-process :name "dgcomplete" :command command :connection-type 'pipe
                               :coding 'utf-8-emacs-unix :noquery t
                               :stderr (get-buffer-create " *dgcomplete stderr*")))
           (conn (make-instance 'jsonrpc-process-connection
                                :name "dgcomplete" :process proc
                                :notification-dispatcher #'dgcomplete--on-notification
                                :request-dispatcher #'dgcomplete--on-request
                                :on-shutdown (lambda (_) (setq dgcomplete--connection nil)))))
      (jsonrpc-request conn :initialize
                       (list :processId (emacs-pid)
                             :clientInfo '(:name "dgcomplete.el" :version "0.1")
                             :rootUri nil
                             :capabilities
                             '(:workspace (:applyEdit t :workspaceEdit (:documentChanges t))
                               :textDocument (:synchronization (:didSave :json-false)
                                              :inlineCompletion (:dynamicRegistration :json-false))
                               :general (:positionEncodings ["utf-16"]))
                             :initializationOptions dgcomplete-settings)
                       :timeout 60)
      (jsonrpc-notify conn :initialized (make-hash-table))
      (setq dgcomplete--connection conn dgcomplete--status 'loading)))
  dgcomplete--connection)

(defun dgcomplete--on-notification (_conn method params)
  "The model's state, from the daemon's log line when it is ready (a shared daemon's too, warm or not) and its
error message when it cannot load it."
  (let ((msg (plist-get params :message)))
    (pcase method
      ('window/showMessage
       (when (eql (plist-get params :type) 1) (setq dgcomplete--status 'error))
       (message "%s" msg))
      ('window/logMessage
       (when (and (stringp msg) (string-match-p " ready" msg) (not (eq dgcomplete--status 'error)))
         (setq dgcomplete--status 'ready))))
    (force-mode-line-update t)))

(defun dgcomplete--lighter ()
  (pcase dgcomplete--status ('ready " dg") ('error " dg!") (_ " dg…")))

(defun dgcomplete--on-request (_conn method params)
  (pcase method
    ('workspace/applyEdit (dgcomplete--apply-edit (plist-get params :edit)))
    (_ (jsonrpc-error :code -32601 :message (format "dgcomplete.el does not handle %s" method)))))

(defun dgcomplete--apply-edit (edit)
  "Apply a rewrite's workspace EDIT (one document's versioned edits) to its buffer, only if the buffer is still the
version the edit was computed for; the answer says whether it was applied, and if not why."
  (let* ((change (and (vectorp (plist-get edit :documentChanges)) (aref (plist-get edit :documentChanges) 0)))
         (doc (plist-get change :textDocument))
         (buf (cl-find-if (lambda (b) (with-current-buffer b (equal (dgcomplete--uri) (plist-get doc :uri))))
                          dgcomplete--buffers)))
    (cond
     ((null buf) (list :applied :json-false :failureReason "the document is not open in Emacs"))
     ((not (eql (plist-get doc :version) (buffer-local-value 'dgcomplete--version buf)))
      (list :applied :json-false :failureReason "the buffer changed since the request"))
     (t
      (with-current-buffer buf
        (save-excursion
          (save-restriction
            (widen)
            ;; from the last edit to the first, so that each edit's positions are still those it was computed for
            (let ((edits (mapcar (lambda (e) (cons (dgcomplete--region-of (plist-get e :range)) (plist-get e :newText)))
                                 (plist-get change :edits))))
              (atomic-change-group
                (dolist (e (sort edits (lambda (a b) (> (caar a) (caar b)))))
                  (goto-char (caar e))
                  (delete-region (caar e) (cdar e))
                  (insert (cdr e))))))))
      (list :applied t)))))

(defun dgcomplete--rewrite (command beg end)
  "Run the daemon's rewrite COMMAND on BEG..END; it edits only that region, or says why it did not."
  (unless dgcomplete-mode (dgcomplete-mode 1))
  (dgcomplete--ensure-known)
  (dgcomplete--clear)
  (let* ((result (jsonrpc-request (dgcomplete--connection) :workspace/executeCommand
                                  (list :command command
                                        :arguments (vector (list :uri (dgcomplete--uri)
                                                                 :range (list :start (dgcomplete--position beg)
                                                                              :end (dgcomplete--position end))
                                                                 :version dgcomplete--version)))
                                  :timeout 120)))
    (unless (eq (plist-get result :applied) t)
      (message "dgcomplete: %s" (let ((why (plist-get result :reason)))
                                  (if (and (stringp why) (> (length why) 0)) why "nothing was applied"))))
    result))

(defun dgcomplete-repair-region (beg end)
  "Mend the syntax errors between BEG and END (the region; the current line without one)."
  (interactive (dgcomplete--region))
  (dgcomplete--rewrite "dgcomplete.repairSyntax" beg end))

(defun dgcomplete-rewrite-region (beg end)
  "Rewrite the code between BEG and END (the region) as the model would write it."
  (interactive (dgcomplete--region))
  (dgcomplete--rewrite "dgcomplete.rewriteSelection" beg end))

(defun dgcomplete-fill-holes (beg end)
  "Fill the holes (`...', `pass  # TODO', `???', `/* TODO */') between BEG and END (the region)."
  (interactive (dgcomplete--region))
  (dgcomplete--rewrite "dgcomplete.fillHoles" beg end))

(defun dgcomplete--region ()
  (if (use-region-p) (list (region-beginning) (region-end)) (list (line-beginning-position) (line-end-position))))

(defun dgcomplete-shutdown ()
  "Stop the daemon (a later `dgcomplete-mode' buffer starts it again)."
  (interactive)
  (when dgcomplete--connection
    (ignore-errors (jsonrpc-shutdown dgcomplete--connection))
    (setq dgcomplete--connection nil dgcomplete--buffers nil dgcomplete--folders nil)))

(defun dgcomplete-stats ()
  "The daemon's `dgcomplete.stats' (requests, shown, accepted, model, latency), shown in the echo area."
  (interactive)
  (let ((stats (jsonrpc-request (dgcomplete--connection) :workspace/executeCommand
                                '(:command "dgcomplete.stats" :arguments []))))
    (when (called-interactively-p 'interactive) (message "dgcomplete: %S" stats))
    stats))

;; ---- asking -------------------------------------------------------------------------------------------------
(defun dgcomplete--schedule ()
  (when (timerp dgcomplete--timer) (cancel-timer dgcomplete--timer))
  (let ((buf (current-buffer)) (tick (buffer-chars-modified-tick)) (pt (point)))
    (setq dgcomplete--timer
          (run-with-timer dgcomplete-delay nil
                          (lambda ()
                            (when (buffer-live-p buf)
                              (with-current-buffer buf
                                (setq dgcomplete--timer nil)
                                (when (and (= tick (buffer-chars-modified-tick)) (= pt (point)))
                                  (dgcomplete--ask 2)))))))))

(defun dgcomplete--ask (trigger)
  "Ask for the point (TRIGGER 2: as you type, 1: invoked); the answer shows if the text and point are unchanged."
  (dgcomplete--ensure-known)
  (let* ((conn (dgcomplete--connection))
         (buf (current-buffer)) (tick (buffer-chars-modified-tick)) (pt (point))
         (params (list :textDocument (dgcomplete--doc) :position (dgcomplete--position pt)
                       :context (list :triggerKind trigger))))
    (when dgcomplete--request  ; the daemon cancels a document's older request too; this frees it sooner
      (jsonrpc-notify conn :$/cancelRequest (list :id dgcomplete--request)))
    (setq dgcomplete--request
          (car (jsonrpc-async-request
                conn :textDocument/inlineCompletion params
                :success-fn (lambda (result)
                              (when (buffer-live-p buf)
                                (with-current-buffer buf
                                  (setq dgcomplete--request nil)
                                  (when (and (= tick (buffer-chars-modified-tick)) (= pt (point)))
                                    (let ((items (append (if (vectorp result) result (plist-get result :items))
                                                         nil)))
                                      (if (null items)
                                          (dgcomplete--clear)  ; a suggestion typed through ends when the daemon says so
                                        (setq dgcomplete--items (cons items 0))
                                        (dgcomplete--show)))))))
                :error-fn (lambda (_) (when (buffer-live-p buf)
                                        (with-current-buffer buf (setq dgcomplete--request nil))))
                :timeout-fn #'ignore)))))

(defun dgcomplete-complete ()
  "Ask for suggestions at point now (up to three; M-] and M-[ cycle them)."
  (interactive)
  (unless dgcomplete-mode (dgcomplete-mode 1))
  (dgcomplete--ask 1))

;; ---- ghost text ---------------------------------------------------------------------------------------------
(defun dgcomplete--item () (and dgcomplete--items (nth (cdr dgcomplete--items) (car dgcomplete--items))))

(defun dgcomplete--parts (item)
  "A list of ITEM's replaced region's start and end and what is left to show after the text already typed
there, or nil when the buffer no longer agrees with the item up to point."
  (let* ((region (if-let ((range (plist-get item :range))) (dgcomplete--region-of range) (cons (point) (point))))
         (start (car region))
         (end (max (point) (cdr region)))
         (text (plist-get item :insertText))
         (typed (buffer-substring-no-properties start (point))))
    (when (and (stringp text) (<= start (point)) (string-prefix-p typed text) (> (length text) (length typed)))
      (list start end (substring text (length typed))))))

(defun dgcomplete--around (first replaced)
  "FIRST (a ghost's first line) split around the characters of REPLACED (closers the editor put right of point,
which the item's range covers), each found in turn: the text before each, then the rest; nil when they are not
all in it."
  (let ((parts nil) (from 0) (k 0))
    (while (and from (< k (length replaced)))
      (let ((at (string-search (substring replaced k (1+ k)) first from)))
        (if (not at) (setq from nil)
          (push (substring first from at) parts)
          (setq from (1+ at) k (1+ k)))))
    (when from (nreverse (cons (substring first from) parts)))))

(defun dgcomplete--segments (parts)
  "The ghost of PARTS (`dgcomplete--parts') as drawn: its first line's pieces around the closers its range covers
right of point (it writes them itself: `bar) + 1' over the `)' of `foo(|)'), and the lines below."
  (let* ((ghost (nth 2 parts))
         (after (buffer-substring-no-properties (point) (nth 1 parts)))
         (nl (string-search "\n" ghost))
         (first (if nl (substring ghost 0 nl) ghost)))
    (list (or (and (> (length after) 0) (dgcomplete--around first after)) (list first))
          (if nl (substring ghost nl) ""))))

(defun dgcomplete--show ()
  "Draw the current item at point (an after-string: the first line inline, the rest as lines below), around the
closers it writes over, so that they are not drawn twice."
  (dgcomplete--clear-overlay)
  (when-let* ((item (dgcomplete--item)) (parts (dgcomplete--parts item)))
    (let* ((drawn (dgcomplete--segments parts))
           (segs (car drawn))
           (shown (concat (apply #'concat segs) (cadr drawn))))
      (when (> (length shown) 0)
        (dotimes (i (length segs))
          (let* ((last (= i (1- (length segs))))
                 (s (propertize (concat (nth i segs) (if last (cadr drawn) "")) 'face 'dgcomplete-ghost))
                 (ov (make-overlay (+ (point) i) (+ (point) i) nil nil t)))
            (when (and (= i 0) (> (length s) 0)) (put-text-property 0 1 'cursor t s))
            (overlay-put ov 'after-string s)
            (if (> i 0) (push ov dgcomplete--more-overlays)
              (setq dgcomplete--overlay ov)
              (overlay-put ov 'dgcomplete shown))))
        (dgcomplete--ghost-mode 1)))))

(defun dgcomplete--clear-overlay ()
  (when (overlayp dgcomplete--overlay) (delete-overlay dgcomplete--overlay))
  (mapc #'delete-overlay dgcomplete--more-overlays)
  (setq dgcomplete--overlay nil dgcomplete--more-overlays nil)
  (when dgcomplete--ghost-mode (dgcomplete--ghost-mode -1)))

(defun dgcomplete--clear ()
  (dgcomplete--clear-overlay)
  (setq dgcomplete--items nil))

(defun dgcomplete-ghost-text ()
  "The ghost text now shown at point (all of it), or nil."
  (and (overlayp dgcomplete--overlay) (overlay-get dgcomplete--overlay 'dgcomplete)))

(defun dgcomplete-dismiss ()
  "Hide the ghost text."
  (interactive)
  (dgcomplete--clear))

(defun dgcomplete--insert (item upto)
  "Put ITEM's text up to UPTO characters of what is left to type (nil: all) in place; non-nil when done."
  (when-let ((parts (dgcomplete--parts item)))
    (let* ((start (nth 0 parts)) (end (nth 1 parts)) (ghost (nth 2 parts))
           (text (plist-get item :insertText))
           (all (or (null upto) (>= upto (length ghost)))))
      (let ((dgcomplete--keep (not all)))
        (if all
            (progn (delete-region start end) (goto-char start) (insert text))
          (let ((range-end (plist-get (plist-get item :range) :end))
                (put (substring ghost 0 upto)))
            (insert put)
            ;; the range's end, right of point on its line, moves with the text put in before it
            (when range-end
              (plist-put range-end :character (+ (plist-get range-end :character)
                                                 (/ (length (encode-coding-string put 'utf-16le)) 2)))))))
      all)))

(defun dgcomplete-accept ()
  "Insert the ghost text (its item's text over its range) and tell the daemon it was taken."
  (interactive)
  (when-let ((item (dgcomplete--item)))
    (dgcomplete--clear)
    (when (dgcomplete--insert item nil)
      (when-let ((cmd (plist-get item :command)))
        (jsonrpc-async-request (dgcomplete--connection) :workspace/executeCommand
                               (list :command (plist-get cmd :command) :arguments (or (plist-get cmd :arguments) []))
                               :success-fn #'ignore :error-fn #'ignore :timeout-fn #'ignore)))))

(defun dgcomplete-accept-word ()
  "Insert the ghost text's next word (the characters before it, then the word); the rest stays shown."
  (interactive)
  (when-let* ((item (dgcomplete--item)) (parts (dgcomplete--parts item)))
    (let* ((ghost (nth 2 parts))
           (segs (car (dgcomplete--segments parts)))  ; its first line around the closers it writes over
           (n (if (string-match "\\`[^[:alnum:]_\n]*[[:alnum:]_]+" ghost) (match-end 0)
                (if (string-match "\\`\n?[^\n]" ghost) (match-end 0) (length ghost)))))
      ;; a word that reaches a closer the item writes over (the editor's `)') is taken with the rest: TAB's edit
      (if (dgcomplete--insert item (unless (and (cdr segs) (> n (length (car segs)))) n))
          (dgcomplete--clear)
        (dgcomplete--show)))))

(defun dgcomplete--cycle (delta)
  (when dgcomplete--items
    (let ((n (length (car dgcomplete--items))))
      (setcdr dgcomplete--items (mod (+ (cdr dgcomplete--items) delta) n))
      (dgcomplete--show))))

(defun dgcomplete-next () "Show the next suggestion." (interactive) (dgcomplete--cycle 1))
(defun dgcomplete-previous () "Show the previous suggestion." (interactive) (dgcomplete--cycle -1))

(defun dgcomplete--post-command ()
  "Ghost text lives at one point: a command that moved point elsewhere hides it, and so does C-g."
  (when (and (overlayp dgcomplete--overlay)
             (or (/= (point) (overlay-start dgcomplete--overlay))
                 (eq this-command 'keyboard-quit)))
    (dgcomplete--clear)))

;;;###autoload
(define-minor-mode dgcomplete-mode
  "Ghost text from the dgcomplete daemon as you type (TAB accepts, C-<right> or M-f a word, C-g hides).
The mode line says `dg…' while the daemon loads its model, `dg' once it is ready, `dg!' if it cannot load it."
  :lighter (:eval (dgcomplete--lighter))
  (if dgcomplete-mode
      (condition-case err
          (progn
            (dgcomplete--open)  ; starts the daemon if need be
            (add-hook 'before-change-functions #'dgcomplete--before-change nil t)
            (add-hook 'after-change-functions #'dgcomplete--after-change nil t)
            (add-hook 'post-command-hook #'dgcomplete--post-command nil t)
            (add-hook 'kill-buffer-hook #'dgcomplete--close nil t))
        (error (setq dgcomplete-mode nil)
               (message "dgcomplete: cannot start %S: %s" dgcomplete-command (error-message-string err))))
    (remove-hook 'before-change-functions #'dgcomplete--before-change t)
    (remove-hook 'after-change-functions #'dgcomplete--after-change t)
    (remove-hook 'post-command-hook #'dgcomplete--post-command t)
    (remove-hook 'kill-buffer-hook #'dgcomplete--close t)
    (when (timerp dgcomplete--timer) (cancel-timer dgcomplete--timer))
    (dgcomplete--clear)
    (dgcomplete--close)))

(provide 'dgcomplete)
;;; dgcomplete.el ends here
