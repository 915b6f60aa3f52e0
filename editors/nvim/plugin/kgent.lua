-- Registers :Kgent at startup; the plugin's modules load on first use. require("kgent").setup{} configures it
-- (without it, the defaults of :help kgent-config apply).
if vim.g.loaded_kgent then
  return
end
vim.g.loaded_kgent = true

if vim.fn.has('nvim-0.10') ~= 1 then
  vim.api.nvim_err_writeln('kgent.nvim needs Neovim 0.10 or later')
  return
end

require('kgent.commands').register()

-- <Plug> mappings (no keys are mapped for you: see :help kgent-mappings for suggested ones).
local function plug(modes, name, rhs, desc)
  -- Not silent when it leaves you on the command line to finish it.
  local silent = not (type(rhs) == 'string' and rhs:sub(-1) == ' ')
  vim.keymap.set(modes, '<Plug>(kgent-' .. name .. ')', rhs, { silent = silent, desc = 'Kgent: ' .. desc })
end
plug('n', 'chat', function()
  require('kgent').chat()
end, 'open the chat')
plug('x', 'chat', ':Kgent chat<CR>', 'open the chat with the selected lines as context')
plug('x', 'run', ':Kgent run ', 'run a prompt with the selected lines as context')
plug('n', 'cancel', function()
  require('kgent').cancel()
end, 'cancel the current run')
plug('n', 'open', function()
  require('kgent').open()
end, 'show the transcript')
plug('n', 'transcripts', function()
  require('kgent').transcripts()
end, 'pick a transcript')
plug('n', 'allow', function()
  require('kgent').approve('allow_once')
end, 'allow the oldest pending call once')
plug('n', 'allow-always', function()
  require('kgent').approve('allow_always')
end, 'allow the oldest pending call for the session')
plug('n', 'reject', function()
  require('kgent').approve('reject_once')
end, 'reject the oldest pending call')
plug('n', 'reject-always', function()
  require('kgent').approve('reject_always')
end, 'reject the oldest pending call, and such calls for the session')
plug('n', 'review', function()
  require('kgent').review()
end, "review the session's changes hunk by hunk")
plug('n', 'fork', function()
  require('kgent.choose').fork()
end, 'fork the session at one of its messages')
plug('n', 'preview', function()
  require('kgent').approve('preview')
end, "show the oldest pending call's diff or details")
