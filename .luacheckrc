-- luacheck (Debian's lua-check) on the Neovim plugin and its tests: `make lint` runs it, with stylua's format check.
std = 'luajit'
-- Neovim's API; the tests also set fields of it (vim.ui.select stubs), so it is writable here.
globals = { 'vim' }
-- Line width is stylua's (.stylua.toml); what stays longer is a string, a LuaLS annotation or a header it cannot break.
max_line_length = false
codes = true
color = false
