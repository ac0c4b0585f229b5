-- End-to-end test of the fallback ghost-text path, the rewrite commands and the rewrite code actions (in
-- Neovim's own code-action menu, vim.ui.select) against the real daemon, in a real (headless) Neovim.
--
--   DG_PYTHON=.venv/bin/python DG_MODEL=path/or/empty DG_RESULT=out.json DG_WORKDIR=tmpdir \
--     nvim --headless -u editors/nvim/test/minimal_init.lua -c "luafile editors/nvim/test/e2e.lua"
--
-- Typing happens through the real input loop (nvim_feedkeys in "t" mode, no "x"), so the test runs as a
-- coroutine resumed by timers while Neovim sits in insert mode waiting for keys.
local api = vim.api
local env = function(k, d) local v = os.getenv(k); if v == nil or v == "" then return d end return v end

local python = env("DG_PYTHON", "python3")
local model = env("DG_MODEL", nil)
local result_file = env("DG_RESULT", nil)
local workdir = env("DG_WORKDIR", vim.fn.tempname())
local log_file = workdir .. "/daemon.log"
vim.fn.mkdir(workdir, "p")

local report = { version = tostring(vim.version().major) .. "." .. vim.version().minor .. "." .. vim.version().patch,
                 checks = {}, ok = false }
local function log(msg)
  io.stderr:write("[nvim-e2e] " .. msg .. "\n")
end
local function check(name, cond, detail)
  table.insert(report.checks, { name = name, ok = cond and true or false, detail = detail })
  log((cond and "PASS " or "FAIL ") .. name .. (detail and (": " .. vim.inspect(detail)) or ""))
  if not cond then error("check failed: " .. name, 0) end
end

local function finish(ok, err)
  report.ok = ok
  report.error = err
  if result_file then
    local f = io.open(result_file, "w")
    f:write(vim.fn.json_encode(report))
    f:close()
  end
  log(ok and "ALL PASSED" or ("FAILED: " .. tostring(err)))
  -- leave the server a moment to shut down cleanly
  local clients = vim.lsp.get_clients and vim.lsp.get_clients() or vim.lsp.get_active_clients()
  for _, c in pairs(clients) do pcall(vim.lsp.stop_client, c.id) end
  vim.defer_fn(function() vim.cmd(ok and "qall!" or "cquit! 1") end, 300)
end

local co
local function sleep(ms)
  vim.defer_fn(function()
    local ok, err = coroutine.resume(co)
    if not ok then finish(false, err) end
  end, ms)
  coroutine.yield()
end
local function wait_until(cond, timeout_ms, step)
  local t0 = vim.loop.now()
  while vim.loop.now() - t0 < timeout_ms do
    local ok, v = pcall(cond)
    if ok and v then return v end
    sleep(step or 50)
  end
  return nil
end
local function feed(keys, remap)
  api.nvim_feedkeys(api.nvim_replace_termcodes(keys, true, false, true), remap and "mt" or "nt", false)
end
local function buf_text()
  return table.concat(api.nvim_buf_get_lines(0, 0, -1, false), "\n")
end

if os.getenv("DG_LSP_DEBUG") then vim.lsp.set_log_level("debug") end
local dg = require("dgcomplete")
local cmd = { python, "-m", "dgcomplete", "serve", "--log-file", log_file }
dg.setup({ cmd = cmd, model = model, mode = "fallback", debounce_ms = 150, settings = { maxLines = 4 },
           log_file = workdir .. "/plugin.log" })

-- a file the memorizer has seen (tests/helpers.py MEMO_TEXT); we type the start of a line it knows
local path = workdir .. "/sample.py"
local f = io.open(path, "w")
f:write("def add(a, b):\n    return a + b\n\n\ndef greet(name):\n    message = \"hello \" + name\n    print(message)\n")
f:close()

co = coroutine.create(function()
  vim.cmd("edit " .. vim.fn.fnameescape(path))
  check("filetype python", vim.bo.filetype == "python", vim.bo.filetype)
  local client = wait_until(function()
    local cs = vim.lsp.get_clients and vim.lsp.get_clients({ bufnr = 0 }) or vim.lsp.buf_get_clients(0)
    for _, c in pairs(cs) do if c.name == "dgcomplete" and c.initialized ~= false then return c end end
  end, 30000)
  check("client attached", client ~= nil)

  local function stats_sync()
    local c = vim.lsp.get_client_by_id(client.id)
    local res, done = nil, false
    local function handler(_, r) res = r; done = true end
    local params = { command = "dgcomplete.stats", arguments = {} }
    if vim.fn.has("nvim-0.11") == 1 then
      c:request("workspace/executeCommand", params, handler, 0)
    else
      c.request("workspace/executeCommand", params, handler, 0)
    end
    wait_until(function() return done end, 10000)
    return res
  end
  -- wait for the model: the daemon only reads a document opened during the load once the load ends
  local st = wait_until(function() return dg.status(0) ~= "loading" and dg.status(0) end, 120000, 100)
  check("model loaded", st == "ready", st)
  sleep(200)

  -- type at the end of the file: "    return mess" (the memorizer knows `return message`); the indent is
  -- set directly so that no indent setting of any Neovim version gets in the way
  api.nvim_buf_set_lines(0, -1, -1, false, { "    return " })
  feed("GA")
  sleep(50)
  local attempts = { "mess", "age", " " }
  local ghost
  for i, chunk in ipairs(attempts) do
    feed(chunk)
    ghost = wait_until(function() return dg.ghost_text(0) end, i == 1 and 60000 or 15000, 50)
    if ghost then break end
    log("no ghost text after typing " .. vim.inspect(chunk) .. "; asking explicitly (3 candidates)")
    dg.request(1)
    ghost = wait_until(function() return dg.ghost_text(0) end, 15000, 50)
    if ghost then break end
  end
  check("ghost text appears", ghost ~= nil and ghost ~= "", ghost)
  check("insert mode", api.nvim_get_mode().mode:match("^i") ~= nil, api.nvim_get_mode().mode)

  -- typing what it says keeps the rest on screen at once (before the debounced request goes out), and the
  -- answer to that keystroke shows one again
  feed(ghost:sub(1, 1))
  sleep(40)
  check("typed through: the rest stays shown at once", dg.ghost_text(0) == ghost:sub(2),
        { shown = dg.ghost_text(0), want = ghost:sub(2) })
  sleep(1500)
  ghost = wait_until(function() return dg.ghost_text(0) end, 15000, 50)
  check("and after the answer to that keystroke", ghost ~= nil and ghost ~= "", ghost)

  local marks = api.nvim_buf_get_extmarks(0, api.nvim_create_namespace("dgcomplete"), 0, -1, { details = true })
  check("one ghost extmark", #marks == 1, #marks)
  local d = marks[1][4]
  local shown = {}
  if d.virt_text then for _, chunk in ipairs(d.virt_text) do table.insert(shown, chunk[1]) end end
  local lines = { table.concat(shown) }
  for _, vl in ipairs(d.virt_lines or {}) do
    local parts = {}
    for _, chunk in ipairs(vl) do table.insert(parts, chunk[1]) end
    table.insert(lines, (table.concat(parts):gsub("^ $", "")))
  end
  local extmark_text = table.concat(lines, "\n")
  check("extmark shows the ghost text", extmark_text == ghost, { extmark = extmark_text, ghost = ghost })
  local cur = api.nvim_win_get_cursor(0)
  check("extmark at the cursor", marks[1][2] == cur[1] - 1 and marks[1][3] == cur[2],
        { mark = { marks[1][2], marks[1][3] }, cursor = cur })
  local expected_pos = (vim.fn.has("nvim-0.10") == 1) and "inline" or "eol"
  if d.virt_text then
    check("virt_text_pos", d.virt_text_pos == expected_pos, d.virt_text_pos)
  end
  report.ghost = ghost

  -- leaving insert mode drops the ghost text; coming back asks again
  feed("<Esc>")
  check("ghost cleared on InsertLeave", wait_until(function() return not dg.visible(0) end, 2000) ~= nil)
  feed("a")
  ghost = wait_until(function() return dg.ghost_text(0) end, 20000, 50)
  if not ghost then
    feed(" ")
    ghost = wait_until(function() return dg.ghost_text(0) end, 20000, 50)
  end
  check("ghost text again after re-entering insert mode", ghost ~= nil, ghost)

  -- :DgToggle pauses: the ghost text goes, and nothing is shown while typing or even when asked; toggled again,
  -- it comes back (and the statusline state says which)
  check(":DgToggle exists", vim.fn.exists(":DgToggle") == 2)
  vim.cmd("DgToggle")
  check("paused: ghost text cleared", not dg.visible(0) and dg.status(0) == "paused", dg.status(0))
  feed(" ")
  feed("<BS>")
  dg.request(1)
  check("paused: nothing shown", wait_until(function() return dg.visible(0) end, 3000, 50) == nil)
  vim.cmd("DgToggle")
  check("resumed", dg.status(0) == "ready", dg.status(0))
  dg.request(1)
  ghost = wait_until(function() return dg.ghost_text(0) end, 20000, 50)
  check("ghost text again once resumed", ghost ~= nil, ghost)

  -- accept with <Tab> (through the mapping): the buffer gains exactly the ghost text at the cursor
  local before = buf_text()
  cur = api.nvim_win_get_cursor(0)
  local lines_before = api.nvim_buf_get_lines(0, 0, -1, false)
  local line = lines_before[cur[1]]
  local expected_lines = vim.list_slice(lines_before, 1, cur[1] - 1)
  local ins = vim.split(line:sub(1, cur[2]) .. ghost .. line:sub(cur[2] + 1), "\n", { plain = true })
  vim.list_extend(expected_lines, ins)
  vim.list_extend(expected_lines, vim.list_slice(lines_before, cur[1] + 1, #lines_before))
  local expected = table.concat(expected_lines, "\n")
  feed("<Tab>", true)
  check("buffer changed on <Tab>", wait_until(function() return buf_text() ~= before end, 3000) ~= nil)
  local after = buf_text()
  check("accept inserts exactly the ghost text", after == expected, { after = after, expected = expected })
  local ghost_lines = vim.split(ghost, "\n", { plain = true })
  local cur2 = api.nvim_win_get_cursor(0)
  local want_row = cur[1] + #ghost_lines - 1
  local want_col = (#ghost_lines == 1 and cur[2] or 0) + #ghost_lines[#ghost_lines]
  check("cursor after the inserted text", cur2[1] == want_row and cur2[2] == want_col,
        { cursor = cur2, want = { want_row, want_col } })
  report.after = after

  -- the item's command (dgcomplete.accept) ran: the server counted it
  local stats
  wait_until(function()
    stats = stats_sync()
    return stats and stats.accepted and stats.accepted >= 1
  end, 10000, 200)
  check("server counted the accept", stats ~= nil and (stats.accepted or 0) >= 1, stats)
  report.stats = stats

  -- <Tab> without ghost text inserts a plain tab/indent (the fallback)
  feed("<Esc>")
  wait_until(function() return not dg.visible(0) end, 2000)
  feed("o")
  sleep(30)
  before = buf_text()
  feed("<Tab>", true)
  check("<Tab> falls back without ghost text", wait_until(function() return buf_text() ~= before end, 2000) ~= nil)
  feed("<Esc>")

  -- a multi-line suggestion: first line as virt_text, the rest as virt_lines; accepting inserts all of it
  api.nvim_buf_set_lines(0, -1, -1, false, { "    if x" })
  feed("GA")
  sleep(100)
  cur = api.nvim_win_get_cursor(0)
  dg.clear(0)
  local row = cur[1] - 1
  local fake = { insertText = "x:\n        pass\n\n    y = 1", filterText = "x:",
                 range = { start = { line = row, character = 7 }, ["end"] = { line = row, character = 8 } } }
  check("multi-line render", dg._render(api.nvim_get_current_buf(), vim.lsp.get_client_by_id(client.id), fake, row, cur[2]) == true)
  marks = api.nvim_buf_get_extmarks(0, api.nvim_create_namespace("dgcomplete"), 0, -1, { details = true })
  d = marks[1][4]
  check("multi-line ghost: virt_text + virt_lines", d.virt_text[1][1] == ":" and #d.virt_lines == 3
        and d.virt_lines[1][1][1] == "        pass" and d.virt_lines[3][1][1] == "    y = 1", d)
  before = api.nvim_buf_get_lines(0, 0, -1, false)
  check("accept multi-line", dg.accept() == true)
  local got = api.nvim_buf_get_lines(0, row, -1, false)
  check("multi-line text inserted", vim.deep_equal(got, { "    if x:", "        pass", "", "    y = 1" }), got)
  check("cursor at the end of the multi-line text",
        vim.deep_equal(api.nvim_win_get_cursor(0), { row + 4, 9 }), api.nvim_win_get_cursor(0))
  feed("<Esc>")
  sleep(100)

  -- <C-Right> (through the mapping) takes the ghost text a word at a time, the rest staying shown; <Tab> the rest
  api.nvim_buf_set_lines(0, -1, -1, false, { "    total = comp" })
  feed("GA")
  sleep(1500) -- the automatic request insert mode sent has come back (an empty answer would clear the ghost below)
  cur = api.nvim_win_get_cursor(0)
  dg.clear(0)
  row = cur[1] - 1
  fake = { insertText = "compute(a, b) + 1", filterText = "compute",
           range = { start = { line = row, character = 12 }, ["end"] = { line = row, character = 16 } } }
  local render_fake = function() return dg._render(api.nvim_get_current_buf(), vim.lsp.get_client_by_id(client.id), fake, row, cur[2]) end
  local line_now = function() return api.nvim_buf_get_lines(0, row, row + 1, false)[1] end
  check("one-line render", render_fake() == true)
  feed("<C-]>", true)
  check("<C-]> dismisses the ghost text, the line untouched",
        wait_until(function() return not dg.visible(0) end, 3000) ~= nil and line_now() == "    total = comp", line_now())
  check("one-line render again", render_fake() == true)
  feed("<C-Right>", true)
  check("<C-Right> inserts the next word", wait_until(function() return line_now() == "    total = compute" end, 3000) ~= nil,
        line_now())
  check("the rest stays shown", dg.ghost_text(0) == "(a, b) + 1", dg.ghost_text(0))
  feed("<C-Right>", true)
  check("<C-Right> again: punctuation, then the name", wait_until(function() return line_now() == "    total = compute(a" end,
        3000) ~= nil and dg.ghost_text(0) == ", b) + 1", { line_now(), dg.ghost_text(0) })
  feed("<Tab>", true)
  check("<Tab> then inserts the rest", wait_until(function() return line_now() == "    total = compute(a, b) + 1" end, 3000) ~= nil,
        line_now())
  check("cursor at the end of the line", api.nvim_win_get_cursor(0)[2] == #"    total = compute(a, b) + 1", api.nvim_win_get_cursor(0))
  feed("<Esc>")
  sleep(100)

  -- the editor's closer right of the cursor, which the item writes too: drawn around it, not twice; <C-Right> stops
  -- short of it, and a word that reaches it takes the rest (the range's edit)
  -- a new last line ``text``, typed into (insert mode), the cursor after ``before``, no ghost text yet
  local function new_line(text, before)
    api.nvim_buf_set_lines(0, -1, -1, false, { text })
    feed("GA")
    sleep(1500)
    row = api.nvim_buf_line_count(0) - 1
    api.nvim_win_set_cursor(0, { row + 1, #before })
    cur = api.nvim_win_get_cursor(0)
    dg.clear(0)
  end
  new_line("    total = compute()", "    total = compute(")
  fake = { insertText = "compute(a, b) + 1", filterText = "compute",
           range = { start = { line = row, character = 12 }, ["end"] = { line = row, character = 21 } } }
  check("render over the editor's closer", render_fake() == true)
  check("the ghost is what accepting adds", dg.ghost_text(0) == "a, b + 1", dg.ghost_text(0))
  marks = api.nvim_buf_get_extmarks(0, api.nvim_create_namespace("dgcomplete"), 0, -1, { details = true })
  if vim.fn.has("nvim-0.10") == 1 then
    check("drawn around the closer", #marks == 2 and marks[1][3] == 20 and marks[1][4].virt_text[1][1] == "a, b"
          and marks[2][3] == 21 and marks[2][4].virt_text[1][1] == " + 1", marks)
  else
    check("drawn at the line's end as the line will read", #marks == 1 and marks[1][4].virt_text[1][1] == "a, b) + 1",
          marks)
  end
  feed("<C-Right>", true)
  check("<C-Right> before the closer", wait_until(function() return line_now() == "    total = compute(a)" end, 3000) ~= nil,
        line_now())
  feed("<C-Right>", true)
  feed("<C-Right>", true)
  check("a word past the closer takes the rest", wait_until(function() return line_now() == "    total = compute(a, b) + 1" end,
        3000) ~= nil, line_now())
  feed("<Esc>")
  sleep(100)

  -- an edit inside a written line: the item goes in at the cursor, before the rest of the line (inline on 0.10+)
  new_line("    q, r = divmod(, divisor)  # both parts", "    q, r = divmod(")
  fake = { insertText = "value", range = { start = { line = row, character = 18 }, ["end"] = { line = row, character = 18 } } }
  check("render inside a written line", render_fake() == true and dg.ghost_text(0) == "value", dg.ghost_text(0))
  marks = api.nvim_buf_get_extmarks(0, api.nvim_create_namespace("dgcomplete"), 0, -1, { details = true })
  if vim.fn.has("nvim-0.10") == 1 then
    check("drawn at the cursor, before the rest of the line", #marks == 1 and marks[1][3] == 18
          and marks[1][4].virt_text_pos == "inline" and marks[1][4].virt_text[1][1] == "value", marks)
  else
    check("drawn over the rest of the line as it will read", #marks == 1 and marks[1][3] == 18
          and marks[1][4].virt_text_pos == "overlay" and marks[1][4].virt_text[1][1] == "value, divisor)  # both parts",
          marks)
  end
  feed("<Tab>", true)
  check("<Tab> puts it in before the rest of the line",
        wait_until(function() return line_now() == "    q, r = divmod(value, divisor)  # both parts" end, 3000) ~= nil,
        line_now())
  check("cursor after what went in", api.nvim_win_get_cursor(0)[2] == #"    q, r = divmod(value", api.nvim_win_get_cursor(0))
  feed("<Esc>")
  sleep(100)

  -- a rewrite command goes out as workspace/executeCommand with {uri, range, version}
  local sent
  local orig = vim.lsp.handlers["workspace/executeCommand"]
  local c = vim.lsp.get_client_by_id(client.id)
  local real_request = c.request
  if vim.fn.has("nvim-0.11") == 1 then
    c.request = function(self, method, params, ...)
      if method == "workspace/executeCommand" then sent = params end
      return real_request(self, method, params, ...)
    end
  else
    c.request = function(method, params, ...)
      if method == "workspace/executeCommand" then sent = params end
      return real_request(method, params, ...)
    end
  end
  local notes, real_notify = {}, vim.notify
  vim.notify = function(msg, ...) table.insert(notes, msg); return real_notify(msg, ...) end
  vim.cmd("1,2DgRepair")
  c.request = real_request
  local _ = orig
  check("DgRepair sends its arguments", sent ~= nil and sent.command == "dgcomplete.repairSyntax"
        and sent.arguments[1].range.start.line == 0 and sent.arguments[1].range["end"].line == 1
        and type(sent.arguments[1].version) == "number" and sent.arguments[1].uri:match("sample%.py$") ~= nil, sent)
  -- lines 1-2 parse: nothing to repair, and the user is told so in one line (the command result's reason)
  local said = wait_until(function()
    for _, m in ipairs(notes) do if m:match("DgRepair: no syntax errors") then return m end end
  end, 15000)
  vim.notify = real_notify
  check("DgRepair says why nothing was applied", said ~= nil, notes)
  sleep(200)

  -- ---- code actions through Neovim's own code-action menu ------------------------------------------------
  -- vim.lsp.buf.code_action() (0.8+, on the visual selection) / vim.lsp.buf.range_code_action() (0.7, on the
  -- '< '> marks) list the actions with vim.ui.select, which is the menu (what a picker plugin replaces). The
  -- test stands in for the user there: it reads the items as the menu formats them and picks one through the
  -- same callback; Neovim then resolves it (codeAction/resolve) and applies its edit. The selection (lines
  -- 5-8) has an unclosed call and a `pass  # TODO` hole: Rewrite selection (variants), Repair syntax and Fill
  -- holes are offered. Actions are picked one by one until one applies an edit; after each, the text outside
  -- the selection must be unchanged (an action the model has no edit for must say why and change nothing).
  local rw_path = workdir .. "/rewrite.py"
  local rw_lines = { "def add(a, b):", "    return a + b", "", "", "def greet(name):", '    message = "hello " + name',
                     "    print(message", "    pass  # TODO", "    return message", "", "", "class Counter:",
                     "    def __init__(self):", "        self.count = 0" }
  f = io.open(rw_path, "w")
  f:write(table.concat(rw_lines, "\n") .. "\n")
  f:close()
  vim.cmd("edit " .. vim.fn.fnameescape(rw_path))
  local rw_buf = api.nvim_get_current_buf()
  check("rewrite.py attached", wait_until(function()
    local cs = vim.lsp.get_clients and vim.lsp.get_clients({ bufnr = rw_buf }) or vim.lsp.buf_get_clients(rw_buf)
    for _, cl in pairs(cs) do if cl.name == "dgcomplete" then return true end end
  end, 15000) ~= nil)
  local rw_orig = buf_text()
  local sel = { first = 5, last = 8 } -- 1-based lines; charwise, from column 0 to the last character
  local sel_range = { start = { line = sel.first - 1, character = 0 },
                      ["end"] = { line = sel.last - 1, character = #rw_lines[sel.last] } }
  local sel_start, sel_end = 0, 0
  for i = 1, sel.first - 1 do sel_start = sel_start + #rw_lines[i] + 1 end
  for i = 1, sel.last - 1 do sel_end = sel_end + #rw_lines[i] + 1 end
  sel_end = sel_end + #rw_lines[sel.last]
  local rw_before, rw_after = rw_orig:sub(1, sel_start), rw_orig:sub(sel_end + 1)

  -- spy on the client's requests (the codeAction range; the resolved action) and on the menu
  local rc = vim.lsp.get_client_by_id(client.id)
  local rc_request = rc.request
  local spy = {}
  local function on_request(method, params, handler)
    if method == "textDocument/codeAction" then spy.range = params.range end
    if method == "codeAction/resolve" and handler then
      return function(err, result, ...)
        spy.resolved = { err = err, result = result }
        return handler(err, result, ...)
      end
    end
    return handler
  end
  if vim.fn.has("nvim-0.11") == 1 then
    rc.request = function(self, method, params, handler, ...)
      return rc_request(self, method, params, on_request(method, params, handler), ...)
    end
  else
    rc.request = function(method, params, handler, ...)
      return rc_request(method, params, on_request(method, params, handler), ...)
    end
  end
  local messages = {}
  local show_message = vim.lsp.handlers["window/showMessage"]
  vim.lsp.handlers["window/showMessage"] = function(err, result, ctx, config)
    if result and result.message then table.insert(messages, result.message) end
    return show_message(err, result, ctx, config)
  end
  local real_select = vim.ui.select
  local menu
  vim.ui.select = function(items, opts, on_choice)
    local titles = {}
    for _, item in ipairs(items) do table.insert(titles, opts.format_item and opts.format_item(item) or tostring(item)) end
    menu = { items = items, opts = opts, on_choice = on_choice, titles = titles }
  end

  -- select lines 5-8 in visual mode and ask for the code actions the way each version does
  local function open_menu()
    menu, spy.range, spy.resolved = nil, nil, nil
    feed("<Esc>")
    sleep(30)
    feed(sel.first .. "G0v" .. sel.last .. "Gg_")
    wait_until(function() return api.nvim_get_mode().mode == "v" end, 2000)
    if vim.lsp.buf.range_code_action and vim.fn.has("nvim-0.8") == 0 then
      feed("<Esc>") -- 0.7: :'<,'>lua vim.lsp.buf.range_code_action()
      wait_until(function() return api.nvim_get_mode().mode == "n" end, 2000)
      vim.lsp.buf.range_code_action()
    else
      vim.lsp.buf.code_action() -- in visual mode: the selection
    end
    wait_until(function() return menu ~= nil end, 20000)
    if api.nvim_get_mode().mode ~= "n" then feed("<Esc>") end
    return menu
  end

  local want = { "dgcomplete: Rewrite selection", "dgcomplete: Repair syntax", "dgcomplete: Fill holes" }
  local m = open_menu()
  local has = function(titles, w)
    for _, t in ipairs(titles or {}) do if t:find(w, 1, true) then return true end end
    return false
  end
  check("code-action request carries the visual selection", spy.range ~= nil and vim.deep_equal(spy.range, sel_range),
        { sent = spy.range, want = sel_range })
  check("the code-action menu lists the dgcomplete actions", m ~= nil and m.opts.kind == "codeaction"
        and has(m.titles, want[1]) and has(m.titles, want[2]) and has(m.titles, want[3]),
        m and { prompt = m.opts.prompt, kind = m.opts.kind, titles = m.titles } or "no menu")

  local order = {}
  for _, w in ipairs({ "dgcomplete: Repair syntax", "dgcomplete: Fill holes", "dgcomplete: Rewrite selection" }) do
    for _, t in ipairs(m.titles) do if t:find(w, 1, true) then table.insert(order, t) end end
  end
  local picks = {}
  for n, title in ipairs(order) do
    if n > 1 then m = open_menu() end
    local idx
    for i, t in ipairs(m and m.titles or {}) do if t == title then idx = i end end
    check(title .. ": in the menu", idx ~= nil, m and m.titles)
    messages = {}
    local base = title:match("^(dgcomplete: [%a ]-)%s*%(variant %d+%)") or title:match("^(dgcomplete: [%a ]+)")
    m.on_choice(m.items[idx], idx)
    -- the resolve answer, then either its edit lands in the buffer or the server says why there is none
    local outcome = wait_until(function()
      if not spy.resolved then return nil end
      local r = spy.resolved.result
      if spy.resolved.err then return { kind = "error", detail = spy.resolved.err } end
      if r and r.edit then return buf_text() ~= rw_orig and { kind = "edit" } or nil end
      for _, msg in ipairs(messages) do
        if msg:find(base .. ": ", 1, true) == 1 then return { kind = "message", detail = msg } end
      end
    end, 90000, 50)
    check(title .. ": picked, an edit or a message", outcome ~= nil and outcome.kind ~= "error", outcome or spy.resolved)
    local now = buf_text()
    local inside = (#now >= #rw_before + #rw_after and now:sub(1, #rw_before) == rw_before
                    and now:sub(#now - #rw_after + 1) == rw_after) and now:sub(#rw_before + 1, #now - #rw_after) or nil
    table.insert(picks, { title = title, outcome = outcome.kind, detail = outcome.detail, selection = inside })
    check(title .. ": text outside the selection unchanged", inside ~= nil, inside or now)
    if outcome.kind == "edit" then
      check(title .. ": the edit changed the selection", now ~= rw_orig, inside)
      break
    end
    sleep(200) -- an edit that would still come
    check(title .. ": no edit, so nothing changed", buf_text() == rw_orig, outcome.detail)
  end
  report.code_actions = picks
  log("code action picks: " .. vim.inspect(picks))
  vim.ui.select = real_select
  vim.lsp.handlers["window/showMessage"] = show_message
  rc.request = rc_request

  finish(true)
end)

local ok, err = coroutine.resume(co)
if not ok then finish(false, err) end
-- a hard stop if something hangs
vim.defer_fn(function() finish(false, "timeout") end, 240000)
