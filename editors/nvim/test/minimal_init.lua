-- nvim --headless -u editors/nvim/test/minimal_init.lua : only this plugin, no user config, no swap/shada
local here = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h")
local plugin = vim.fn.fnamemodify(here, ":h")
vim.opt.runtimepath:prepend(plugin)
vim.opt.swapfile = false
vim.opt.shadafile = "NONE"
vim.opt.more = false
vim.opt.shortmess:append("I")
vim.opt.expandtab = true
vim.opt.shiftwidth = 4
vim.opt.autoindent = false
vim.opt.smartindent = false
vim.cmd("filetype on")
vim.opt.showmode = false
