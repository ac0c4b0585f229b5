-- dgcomplete for Neovim 0.7 - 0.12: starts the `dgcomplete serve` language server and shows its inline
-- completions as ghost text.
--
--   0.12+     vim.lsp.inline_completion (built in) renders and accepts; we only map keys.
--   0.7-0.11  we send textDocument/inlineCompletion ourselves (debounced, cancelled, dropped when stale) and
--             draw the suggestion with extmarks: virt_text (inline on 0.10+, eol before; inside a written line,
--             overlay before 0.10) + virt_lines.
--   server    vim.lsp.config/enable on 0.11+, vim.lsp.start on 0.8-0.10, vim.lsp.start_client on 0.7.
--
--   require("dgcomplete").setup({ cmd = {"dgcomplete", "serve"}, model = nil, shared = "auto", filetypes = {...},
--                                keys = {...} })
local M = {}

local uv = vim.loop
local api = vim.api
local has = function(v) return vim.fn.has("nvim-" .. v) == 1 end

local NS = api.nvim_create_namespace("dgcomplete")
local NAME = "dgcomplete"
local TRIGGER_INVOKED, TRIGGER_AUTOMATIC = 1, 2

M.defaults = {
  cmd = nil, -- default: { "dgcomplete", "serve" }
  model = nil, -- checkpoint dir (--model); nil: the embedded model
  shared = "auto", -- relay to one per-user daemon (`serve --shared`): true, false, or "auto" (on when `model` is set)
  filetypes = { "python", "javascript", "javascriptreact", "typescript", "typescriptreact", "go", "rust", "java",
                "c", "cpp", "lua", "sh", "bash", "json", "ruby", "php", "vue", "svelte", "html" },
  root_markers = { ".git", "pyproject.toml", "package.json", "go.mod", "Cargo.toml", "Gemfile", "composer.json" },
  settings = {}, -- server settings, camelCase (maxLines, maxTokens, steps, enabledLanguages, completionItems, ...)
  keys = {
    accept = "<Tab>", -- accepts when ghost text is visible, else does what the key did before
    accept_word = "<C-Right>", -- accepts the ghost text's next word (our own ghost text), else the key's own
    next = "<M-]>",
    prev = "<M-[>",
    dismiss = "<C-]>",
  },
  debounce_ms = 150,
  hl_group = "Comment", -- the ghost text's highlight (linked from DgcompleteGhost)
  mode = "auto", -- "auto": native on 0.12+, else our own ghost text; "fallback": always ours; "native"; "off"
  on_attach = nil, -- function(client, bufnr)
  log_file = nil, -- a path: the plugin's own debug log (requests, responses, why a suggestion was dropped)
}

M.config = vim.deepcopy(M.defaults)
M.state = {} -- per buffer: { timer, request = {client, id}, ghost = {...}, items, index }
M.server_status = {} -- per client id: "loading" | "ready" | "error" (from $/progress, logMessage, showMessage)
M.paused = false -- :DgToggle: no suggestion is asked for (and none shown) until it is toggled again

local function dlog(fmt, ...)
  if not M.config.log_file then return end
  local ok, msg = pcall(string.format, fmt, ...)
  local f = io.open(M.config.log_file, "a")
  if f then
    f:write(os.date("%H:%M:%S "), ok and msg or fmt, "\n")
    f:close()
  end
end

-- ---- small compat helpers --------------------------------------------------------------------------------
local function client_call(client, method, ...)
  if has("0.11") then return client[method](client, ...) end
  return client[method](...)
end

local function get_client(bufnr)
  local clients
  if vim.lsp.get_clients then
    clients = vim.lsp.get_clients({ bufnr = bufnr, name = NAME })
  else
    clients = {}
    for _, c in pairs(vim.lsp.buf_get_clients(bufnr)) do
      if c.name == NAME then table.insert(clients, c) end
    end
  end
  return clients[1]
end

local function buf_state(bufnr)
  local s = M.state[bufnr]
  if not s then
    s = {}
    M.state[bufnr] = s
  end
  return s
end

-- LSP character offset (in `encoding` units) -> byte offset in `line`
local function to_byte(line, character, encoding)
  if encoding == "utf-8" then return math.min(character, #line) end
  local units, i = 0, 1
  while i <= #line and units < character do
    local b = line:byte(i)
    local len = b >= 0xF0 and 4 or b >= 0xE0 and 3 or b >= 0xC0 and 2 or 1
    units = units + ((encoding == "utf-16" and len == 4) and 2 or 1)
    i = i + len
  end
  return i - 1
end

-- byte offset -> LSP character offset
local function to_char(line, byte, encoding)
  if encoding == "utf-8" then return byte end
  local units, i = 0, 1
  while i <= byte and i <= #line do
    local b = line:byte(i)
    local len = b >= 0xF0 and 4 or b >= 0xE0 and 3 or b >= 0xC0 and 2 or 1
    units = units + ((encoding == "utf-16" and len == 4) and 2 or 1)
    i = i + len
  end
  return units
end

local function item_text(item)
  local t = item.insertText
  if type(t) == "table" then t = t.value end -- StringValue (snippet): shown and inserted as plain text
  return t or ""
end

local function doc_version(bufnr)
  local v = vim.lsp.util.buf_versions and vim.lsp.util.buf_versions[bufnr]
  return v or api.nvim_buf_get_changedtick(bufnr)
end

-- ---- ghost text (0.7-0.11) ---------------------------------------------------------------------------------
function M.clear(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and api.nvim_get_current_buf() or bufnr
  local s = M.state[bufnr]
  if not s then return end
  if api.nvim_buf_is_valid(bufnr) then api.nvim_buf_clear_namespace(bufnr, NS, 0, -1) end
  s.ghost = nil
end

local function cancel(bufnr)
  local s = M.state[bufnr]
  if not s then return end
  if s.timer then
    s.timer:stop()
  end
  if s.request then
    local c, id = s.request.client, s.request.id
    s.request = nil
    dlog("cancel %s", tostring(id))
    pcall(client_call, c, "cancel_request", id) -- sends $/cancelRequest
  end
end

--- Is ghost text shown in this buffer?
function M.visible(bufnr)
  local s = M.state[(bufnr == nil or bufnr == 0) and api.nvim_get_current_buf() or bufnr]
  return s ~= nil and s.ghost ~= nil
end

--- The ghost text shown (what accepting adds after the cursor), or nil.
function M.ghost_text(bufnr)
  local s = M.state[(bufnr == nil or bufnr == 0) and api.nvim_get_current_buf() or bufnr]
  return s and s.ghost and s.ghost.text or nil
end

--- ``ghost`` (a suggestion's first line) split around ``replaced`` (the closers right of the cursor its range
--- covers), each of them found in turn: the text before each, then the rest; nil when they are not all in it.
local function around(ghost, replaced)
  local parts, from = {}, 1
  for k = 1, #replaced do
    local at = ghost:find(replaced:sub(k, k), from, true)
    if not at then return nil end
    parts[#parts + 1] = ghost:sub(from, at - 1)
    from = at + 1
  end
  parts[#parts + 1] = ghost:sub(from)
  return parts
end

local function render(bufnr, client, item, row, col)
  local line = api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1] or ""
  local enc = client.offset_encoding or "utf-16"
  local text = item_text(item)
  local r = item.range
  local start_b = r and r.start.line == row and to_byte(line, r.start.character, enc) or col
  local typed = line:sub(start_b + 1, col)
  if text:sub(1, #typed) ~= typed then -- the suggestion no longer extends what is typed
    dlog("dropped: %q does not extend %q", text, typed)
    return false
  end
  local lines = vim.split(text:sub(#typed + 1), "\n", { plain = true })
  -- the range may cover closers the editor put right of the cursor, which the item writes itself (`bar) + 1`
  -- over the `)` of `foo(|)`): its first line is drawn around them, so they are not drawn twice
  local parts = { lines[1] }
  local end_b = col -- where the item's range ends on this line
  if r and r["end"].line == row then
    end_b = to_byte(line, r["end"].character, enc)
    local replaced = line:sub(col + 1, end_b)
    if #replaced > 0 then parts = around(lines[1], replaced) or parts end
  end
  local written = lines[1] -- at the line's end (before 0.10), the first line is drawn as it will read
  local after = #lines == 1 and line:sub(end_b + 1) or "" -- the rest of the line the item goes in before
  lines[1] = table.concat(parts)
  local ghost = table.concat(lines, "\n") -- what accepting adds
  if ghost == "" then
    dlog("dropped: nothing left to show of %q", text)
    return false
  end
  local hl = "DgcompleteGhost"
  local inline = has("0.10")
  local opts = { id = 1, hl_mode = "combine", priority = 200 }
  local first = inline and parts[1] or written
  if first ~= "" then
    opts.virt_text = { { first, hl } }
    opts.virt_text_pos = inline and "inline" or "eol"
    if not inline and after:match("%S") then
      -- an edit inside a written line, without inline virtual text: the line from the cursor as it will read, drawn
      -- over the text there (at the line's end, the item alone read as if it came after that text)
      opts.virt_text = { { written .. after, hl } }
      opts.virt_text_pos = "overlay"
    end
  end
  if #lines > 1 then
    local vl = {}
    for i = 2, #lines do
      vl[#vl + 1] = { { lines[i] == "" and " " or lines[i], hl } }
    end
    opts.virt_lines = vl
  end
  api.nvim_buf_clear_namespace(bufnr, NS, 0, -1)
  api.nvim_buf_set_extmark(bufnr, NS, row, col, opts)
  if inline then -- what goes after each closer it writes over (closers are one byte each)
    for i = 2, #parts do
      if parts[i] ~= "" then
        api.nvim_buf_set_extmark(bufnr, NS, row, col + i - 1,
          { virt_text = { { parts[i], hl } }, virt_text_pos = "inline", hl_mode = "combine", priority = 200 })
      end
    end
  end
  buf_state(bufnr).ghost = { text = ghost, parts = parts, item = item, client_id = client.id, row = row, col = col,
                             tick = api.nvim_buf_get_changedtick(bufnr) }
  return true
end

M._render = render -- for tests

local function show_index(bufnr, client, row, col)
  local s = buf_state(bufnr)
  local items = s.items or {}
  local n = #items
  for k = 0, n - 1 do
    local i = ((s.index - 1 + k) % n) + 1
    if render(bufnr, client, items[i], row, col) then
      s.index = i
      return true
    end
  end
  M.clear(bufnr)
  return false
end

--- Ask the server for a suggestion at the cursor now (trigger: 1 = invoked, 2 = automatic).
function M.request(trigger)
  if M.paused then return end
  local bufnr = api.nvim_get_current_buf()
  local client = get_client(bufnr)
  if not client then return end
  cancel(bufnr)
  local win = api.nvim_get_current_win()
  local cursor = api.nvim_win_get_cursor(win)
  local row, col = cursor[1] - 1, cursor[2]
  local tick = api.nvim_buf_get_changedtick(bufnr)
  local line = api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1] or ""
  local enc = client.offset_encoding or "utf-16"
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    position = { line = row, character = to_char(line, col, enc) },
    context = { triggerKind = trigger or TRIGGER_AUTOMATIC },
  }
  local s = buf_state(bufnr)
  local ok, id
  ok, id = client_call(client, "request", "textDocument/inlineCompletion", params, function(err, result)
    if s.request and s.request.id == id then s.request = nil end
    dlog("response %s: err=%s result=%s", tostring(id), vim.inspect(err), vim.inspect(result, { newline = " ", indent = "" }))
    if err or not result or not api.nvim_buf_is_valid(bufnr) then return end
    -- stale: the buffer changed, the cursor moved or insert mode was left while the model was thinking
    if api.nvim_buf_get_changedtick(bufnr) ~= tick or api.nvim_get_current_buf() ~= bufnr then
      dlog("dropped: the buffer changed")
      return
    end
    local now = api.nvim_win_get_cursor(0)
    if now[1] - 1 ~= row or now[2] ~= col or not api.nvim_get_mode().mode:match("^i") then
      dlog("dropped: the cursor moved or insert mode ended")
      return
    end
    local items = result.items or result -- InlineCompletionList | InlineCompletionItem[]
    if type(items) ~= "table" or #items == 0 then
      M.clear(bufnr)
      return
    end
    s.items, s.index = items, 1
    show_index(bufnr, client, row, col)
  end, bufnr)
  dlog("request %s at %d:%d (trigger %d)", tostring(id), row, params.position.character, params.context.triggerKind)
  if ok then s.request = { client = client, id = id } end
end

local function schedule(bufnr)
  local s = buf_state(bufnr)
  cancel(bufnr)
  M.clear(bufnr)
  if M.paused then return end
  if not s.timer then s.timer = uv.new_timer() end
  s.timer:start(M.config.debounce_ms, 0, vim.schedule_wrap(function()
    if api.nvim_buf_is_valid(bufnr) and api.nvim_get_current_buf() == bufnr
      and api.nvim_get_mode().mode:match("^i") then
      M.request(TRIGGER_AUTOMATIC)
    end
  end))
end

--- Accept the shown suggestion: replace its range with its text, move the cursor after it, run its command.
function M.accept()
  local bufnr = api.nvim_get_current_buf()
  local s = M.state[bufnr]
  local g = s and s.ghost
  if not g then return false end
  local client = vim.lsp.get_client_by_id(g.client_id)
  M.clear(bufnr)
  cancel(bufnr)
  if not client or api.nvim_buf_get_changedtick(bufnr) ~= g.tick then return false end
  local item = g.item
  local line = api.nvim_buf_get_lines(bufnr, g.row, g.row + 1, false)[1] or ""
  local enc = client.offset_encoding or "utf-16"
  local r = item.range
  local sb = (r and r.start.line == g.row) and to_byte(line, r.start.character, enc) or g.col
  local eb = (r and r["end"].line == g.row) and math.max(g.col, to_byte(line, r["end"].character, enc)) or g.col
  local new = vim.split(item_text(item), "\n", { plain = true })
  new[1] = line:sub(1, sb) .. new[1]
  local last = #new
  local cursor_col = #new[last]
  new[last] = new[last] .. line:sub(eb + 1)
  -- one undo step, the same text an LSP TextEdit would produce
  api.nvim_buf_set_lines(bufnr, g.row, g.row + 1, false, new)
  api.nvim_win_set_cursor(0, { g.row + last, cursor_col })
  if item.command then
    client_call(client, "request", "workspace/executeCommand",
      { command = item.command.command, arguments = item.command.arguments }, function() end, bufnr)
  end
  return true
end

--- Accept the shown suggestion's next word (other characters, then a name), as VS Code's accept next word does:
--- it is inserted at the cursor and the rest stays shown. The last word is a whole accept (the item's command
--- runs). The right first words of a suggestion that goes wrong later still save typing.
function M.accept_word()
  local bufnr = api.nvim_get_current_buf()
  local s = M.state[bufnr]
  local g = s and s.ghost
  if not g or api.nvim_buf_get_changedtick(bufnr) ~= g.tick then return false end
  local client = vim.lsp.get_client_by_id(g.client_id)
  if not client then return false end
  local first = vim.split(g.text, "\n", { plain = true })[1]
  local word = first:match("^[^%w_$]*[%w_$]+") or first
  -- a word that reaches a closer the item writes over (the editor's `)`) is taken with the rest: Tab's edit
  if word == "" or word == g.text or #word > #g.parts[1] then return M.accept() end
  cancel(bufnr)
  api.nvim_buf_set_text(bufnr, g.row, g.col, g.row, g.col, { word })
  local col = g.col + #word
  api.nvim_win_set_cursor(0, { g.row + 1, col })
  local item = g.item
  if item.range and item.range["end"].line == g.row then -- its range ends right of the word: it moves with the text
    item = vim.deepcopy(item)
    local enc = client.offset_encoding or "utf-16"
    item.range["end"].character = item.range["end"].character + to_char(word, #word, enc)
  end
  render(bufnr, client, item, g.row, col) -- the rest, from the new cursor
  s.kept_tick = api.nvim_buf_get_changedtick(bufnr) -- the TextChangedI this edit fires keeps it on screen
  return true
end

--- Show the next (+1) or previous (-1) suggestion; the first call asks for more candidates.
function M.cycle(delta)
  local bufnr = api.nvim_get_current_buf()
  local s = M.state[bufnr]
  local client = get_client(bufnr)
  if not client then return end
  if not s or not s.items or #s.items < 2 then
    M.request(TRIGGER_INVOKED)
    return
  end
  local cur = api.nvim_win_get_cursor(0)
  s.index = ((s.index - 1 + delta) % #s.items) + 1
  show_index(bufnr, client, cur[1] - 1, cur[2])
end

local function feed(keys)
  api.nvim_feedkeys(api.nvim_replace_termcodes(keys, true, false, true), "n", false)
end

-- what the accept key did before we mapped it (a mapping's rhs or callback, else the key itself)
local function fallback_for(lhs)
  local prev
  if vim.fn.maparg then
    local ok, m = pcall(vim.fn.maparg, lhs, "i", false, true)
    if ok and type(m) == "table" and (m.rhs or m.callback) and not (m.desc or ""):match("^dgcomplete") then prev = m end
  end
  return function()
    if prev and prev.callback then
      local out = prev.callback()
      if prev.expr == 1 and type(out) == "string" then
        api.nvim_feedkeys(api.nvim_replace_termcodes(out, true, false, true), prev.noremap == 1 and "n" or "m", false)
      end
    elseif prev and prev.rhs and prev.rhs ~= "" then
      local rhs = prev.expr == 1 and vim.fn.eval(prev.rhs) or prev.rhs
      api.nvim_feedkeys(api.nvim_replace_termcodes(rhs, true, false, true), prev.noremap == 1 and "n" or "m", false)
    else
      feed(lhs)
    end
  end
end

local function attach_fallback(bufnr)
  local s = buf_state(bufnr)
  if s.attached then return end
  s.attached = true
  local group = api.nvim_create_augroup("dgcomplete_" .. bufnr, { clear = true })
  api.nvim_create_autocmd({ "TextChangedI", "TextChangedP", "InsertEnter" }, {
    group = group, buffer = bufnr,
    callback = function()
      local kept = s.kept_tick
      s.kept_tick = nil
      if kept and kept == api.nvim_buf_get_changedtick(bufnr) and s.ghost then return end -- M.accept_word's own edit
      local g = s.ghost
      schedule(bufnr)
      -- typed through: characters the ghost text goes on with keep its rest on screen at once, until the answer
      -- to this change replaces it (or, empty, ends it); render() refuses anything the suggestion does not extend
      local client = g and vim.lsp.get_client_by_id(g.client_id)
      local cur = api.nvim_win_get_cursor(0)
      if client and api.nvim_get_current_buf() == bufnr and cur[1] - 1 == g.row and cur[2] > g.col then
        render(bufnr, client, g.item, g.row, cur[2])
      end
    end,
  })
  api.nvim_create_autocmd("CursorMovedI", {
    group = group, buffer = bufnr,
    callback = function()
      local g = s.ghost
      if g then
        local cur = api.nvim_win_get_cursor(0)
        -- a move without an edit hides it; after an edit TextChangedI decides (typed through or not)
        if (cur[1] - 1 ~= g.row or cur[2] ~= g.col) and api.nvim_buf_get_changedtick(bufnr) == g.tick then
          cancel(bufnr)
          M.clear(bufnr)
        end
      elseif s.request then
        cancel(bufnr)
      end
    end,
  })
  api.nvim_create_autocmd({ "InsertLeave", "BufLeave" }, {
    group = group, buffer = bufnr, callback = function() cancel(bufnr); M.clear(bufnr) end,
  })
  api.nvim_create_autocmd("BufUnload", {
    group = group, buffer = bufnr,
    callback = function()
      cancel(bufnr)
      if s.timer then s.timer:close() end
      M.state[bufnr] = nil
    end,
  })
  local keys = M.config.keys or {}
  local function map(lhs, fn, desc)
    if lhs and lhs ~= "" then
      vim.keymap.set("i", lhs, fn, { buffer = bufnr, silent = true, desc = "dgcomplete: " .. desc })
    end
  end
  -- a key that acts on the ghost text when there is some (act returns true), else does what it did before
  local function map_or_fallback(lhs, act, desc)
    if not lhs then return end
    local fb = fallback_for(lhs)
    map(lhs, function()
      if not act() then fb() end
    end, desc)
  end
  map_or_fallback(keys.accept, M.accept, "accept suggestion")
  map_or_fallback(keys.accept_word, M.accept_word, "accept the next word of the suggestion")
  map(keys.next, function() M.cycle(1) end, "next suggestion")
  map(keys.prev, function() M.cycle(-1) end, "previous suggestion")
  map_or_fallback(keys.dismiss, function()
    if not M.visible(bufnr) then return false end
    cancel(bufnr)
    M.clear(bufnr)
    return true
  end, "dismiss suggestion")
end

-- ---- native inline completion (0.12+) --------------------------------------------------------------------
local function native_keys()
  local ic = vim.lsp.inline_completion
  local keys = M.config.keys or {}
  if keys.accept then
    vim.keymap.set("i", keys.accept, function()
      if not ic.get() then return keys.accept end
    end, { expr = true, replace_keycodes = true, desc = "dgcomplete: accept inline completion" })
  end
  if keys.next then
    vim.keymap.set("i", keys.next, function() ic.select({ count = 1 }) end, { desc = "dgcomplete: next" })
  end
  if keys.prev then
    vim.keymap.set("i", keys.prev, function() ic.select({ count = -1 }) end, { desc = "dgcomplete: previous" })
  end
end

local function use_native()
  local mode = M.config.mode
  if mode == "fallback" or mode == "off" then return false end
  return vim.lsp.inline_completion ~= nil and has("0.12")
end

-- ---- server ----------------------------------------------------------------------------------------------
local function server_cmd()
  local cmd = vim.deepcopy(M.config.cmd or { "dgcomplete", "serve" })
  local has_model = M.config.model and M.config.model ~= ""
  local shared = M.config.shared == true or (M.config.shared == "auto" and has_model)
  if shared and not M.config.cmd then
    table.insert(cmd, "--shared") -- every Neovim shares one daemon, one model in memory
  end
  if has_model then
    table.insert(cmd, "--model")
    table.insert(cmd, M.config.model)
  end
  return cmd
end

local function capabilities()
  local caps = vim.lsp.protocol.make_client_capabilities()
  if not use_native() and M.config.mode ~= "off" then
    -- we render inline completions ourselves: say so, and the server keeps plain completion items for
    -- clients that cannot (completionItems = "auto")
    caps.textDocument = caps.textDocument or {}
    caps.textDocument.inlineCompletion = caps.textDocument.inlineCompletion or { dynamicRegistration = false }
  end
  return caps
end

local function on_attach(client, bufnr)
  if not use_native() and M.config.mode ~= "off" then attach_fallback(bufnr) end
  if M.config.on_attach then M.config.on_attach(client, bufnr) end
end

local function find_root(bufnr)
  local name = api.nvim_buf_get_name(bufnr)
  local dir = name ~= "" and vim.fn.fnamemodify(name, ":p:h") or vim.fn.getcwd()
  if vim.fs and vim.fs.find then
    local found = vim.fs.find(M.config.root_markers, { path = dir, upward = true })[1]
    if found then return vim.fn.fnamemodify(found, ":h") end
  else
    for _, m in ipairs(M.config.root_markers) do
      local f = vim.fn.finddir(m, dir .. ";")
      if f == "" then f = vim.fn.findfile(m, dir .. ";") end
      if f ~= "" then return vim.fn.fnamemodify(f, ":p:h:h") end
    end
  end
  return dir
end

-- follow the model load: $/progress begin/end, the "ready" log line and an error showMessage
local function status_handlers()
  local function wrap(method, fn)
    return function(err, result, ctx, config)
      pcall(fn, result or {}, ctx or {})
      local default = vim.lsp.handlers[method]
      if default then return default(err, result, ctx, config) end
    end
  end
  return {
    ["$/progress"] = wrap("$/progress", function(r, ctx)
      local v = r.value or {}
      if v.kind == "begin" then M.server_status[ctx.client_id] = "loading"
      elseif v.kind == "end" then M.server_status[ctx.client_id] = v.message == "failed" and "error" or "ready" end
    end),
    ["window/logMessage"] = wrap("window/logMessage", function(r, ctx)
      if type(r.message) == "string" and r.message:match(" ready") and M.server_status[ctx.client_id] ~= "error" then
        M.server_status[ctx.client_id] = "ready"
      end
    end),
    ["window/showMessage"] = wrap("window/showMessage", function(r, ctx)
      if r.type == 1 then M.server_status[ctx.client_id] = "error" end
    end),
  }
end

--- "loading" | "ready" | "paused" | "error" | nil (no server attached): for a statusline.
function M.status(bufnr)
  local client = get_client((bufnr == nil or bufnr == 0) and api.nvim_get_current_buf() or bufnr)
  if not client then return nil end
  local st = M.server_status[client.id] or "loading"
  return (st == "ready" and M.paused) and "paused" or st
end

--- Pause (false) or resume (true) suggestions; nil flips. Paused, nothing is asked for, so no model work runs
--- while you type; the rewrite commands still work.
function M.toggle(on)
  if on == nil then on = M.paused end
  M.paused = not on
  for bufnr, _ in pairs(M.state) do
    if api.nvim_buf_is_valid(bufnr) then
      cancel(bufnr)
      M.clear(bufnr)
    end
  end
  if use_native() and vim.lsp.inline_completion then vim.lsp.inline_completion.enable(on) end
  vim.notify("dgcomplete: suggestions " .. (on and "on" or "paused"), vim.log.levels.INFO)
  return on
end

local function lsp_config()
  return {
    handlers = status_handlers(),
    name = NAME,
    cmd = server_cmd(),
    filetypes = M.config.filetypes,
    root_markers = M.config.root_markers,
    init_options = { dgcomplete = M.config.settings or {} },
    settings = { dgcomplete = M.config.settings or {} },
    capabilities = capabilities(),
    on_attach = on_attach,
    flags = { debounce_text_changes = 50 },
  }
end

local client_id07 -- 0.7: one client, started on the first matching buffer

local function start_legacy(bufnr)
  local cfg = lsp_config()
  cfg.root_dir = find_root(bufnr)
  cfg.filetypes, cfg.root_markers = nil, nil
  if vim.lsp.start then
    vim.lsp.start(cfg, { bufnr = bufnr })
    return
  end
  if not client_id07 or not vim.lsp.get_client_by_id(client_id07) then
    client_id07 = vim.lsp.start_client(cfg)
  end
  if client_id07 then vim.lsp.buf_attach_client(bufnr, client_id07) end
end

local function rewrite_command(name, server_command)
  api.nvim_create_user_command(name, function(opts)
    local bufnr = api.nvim_get_current_buf()
    local client = get_client(bufnr)
    if not client then
      vim.notify("dgcomplete: no server attached to this buffer", vim.log.levels.WARN)
      return
    end
    local enc = client.offset_encoding or "utf-16"
    local l1, l2 = opts.line1 - 1, opts.line2 - 1
    local c1, c2 = 0, nil
    -- a charwise visual selection gives columns through the '< and '> marks
    local vs, ve = api.nvim_buf_get_mark(bufnr, "<"), api.nvim_buf_get_mark(bufnr, ">")
    if opts.range == 2 and vim.fn.visualmode() == "v" and vs[1] - 1 == l1 and ve[1] - 1 == l2 then
      c1, c2 = vs[2], ve[2] + 1
    end
    local first = api.nvim_buf_get_lines(bufnr, l1, l1 + 1, false)[1] or ""
    local last = api.nvim_buf_get_lines(bufnr, l2, l2 + 1, false)[1] or ""
    c2 = math.min(c2 or #last, #last)
    local arg = {
      uri = vim.uri_from_bufnr(bufnr),
      range = {
        start = { line = l1, character = to_char(first, c1, enc) },
        ["end"] = { line = l2, character = to_char(last, c2, enc) },
      },
      version = doc_version(bufnr),
    }
    -- the server answers with workspace/applyEdit, which Neovim applies; when nothing was applied the result
    -- says why in one line (no repair found, the result would not parse, selection too large, ...)
    client_call(client, "request", "workspace/executeCommand", { command = server_command, arguments = { arg } },
      function(err, result)
        if err then
          vim.notify("dgcomplete: " .. (err.message or tostring(err)), vim.log.levels.ERROR)
        elseif type(result) == "table" and result.applied == false then
          vim.notify("dgcomplete: " .. name .. ": " .. tostring(result.reason or "nothing to apply"), vim.log.levels.INFO)
        end
      end, bufnr)
  end, { range = true, desc = "dgcomplete: " .. server_command })
end

local function user_commands()
  rewrite_command("DgRewrite", "dgcomplete.rewriteSelection")
  rewrite_command("DgRepair", "dgcomplete.repairSyntax")
  rewrite_command("DgFillHoles", "dgcomplete.fillHoles")
  api.nvim_create_user_command("DgToggle", function() M.toggle() end,
    { desc = "dgcomplete: pause / resume suggestions" })
  api.nvim_create_user_command("DgStats", function()
    local client = get_client(api.nvim_get_current_buf())
    if not client then return end
    client_call(client, "request", "workspace/executeCommand", { command = "dgcomplete.stats", arguments = {} },
      function(err, result)
        print(err and ("dgcomplete: " .. err.message) or vim.inspect(result))
      end)
  end, { desc = "dgcomplete: usage counters and latency" })
end

function M.setup(opts)
  if not has("0.7") then
    vim.notify("dgcomplete needs Neovim 0.7 or newer", vim.log.levels.ERROR)
    return
  end
  M.config = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts or {})
  if M.config.mode == "off" then return end
  api.nvim_set_hl(0, "DgcompleteGhost", { link = M.config.hl_group, default = true })
  user_commands()

  if has("0.11") and vim.lsp.config and vim.lsp.enable then
    local cfg = lsp_config()
    cfg.name = nil
    vim.lsp.config(NAME, cfg)
    vim.lsp.enable(NAME)
  else
    local group = api.nvim_create_augroup("dgcomplete_start", { clear = true })
    api.nvim_create_autocmd("FileType", {
      group = group, pattern = M.config.filetypes,
      callback = function(args) start_legacy(args.buf) end,
    })
    -- buffers already open when setup() runs
    for _, b in ipairs(api.nvim_list_bufs()) do
      if api.nvim_buf_is_loaded(b) and vim.tbl_contains(M.config.filetypes, vim.bo[b].filetype) then
        start_legacy(b)
      end
    end
  end

  if use_native() then
    vim.lsp.inline_completion.enable(true)
    native_keys()
  end
end

return M
