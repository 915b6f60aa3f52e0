-- Kgent for Neovim: setup{} and the Lua API (mirrors :Kgent). The API is made of: kgent.runs (run, cancel, steer,
-- follow-up), kgent.sessions (list, resume), kgent.daemon (the connection and what arrives over it), kgent.ui (the
-- transcript window) over kgent.state (the state below). See :help kgent.
local config = require('kgent.config')
local ui = require('kgent.ui')
local approval = require('kgent.approval')
local daemon = require('kgent.daemon')
local runs = require('kgent.runs')
local sessions = require('kgent.sessions')

local M = {}

--- The plugin's state: the connection, the current session and run, and every run seen (kgent.State).
M.state = require('kgent.state').state

-- Connection
M.connection = daemon.connection
M.server_info = daemon.server_info
M.reload_changed = daemon.reload_changed

-- Runs
M.selection_prompt = runs.selection_prompt
M.run = runs.run
M.new_session = runs.new_session
M.cancel = runs.cancel
M.steer = runs.steer
M.follow_up = runs.follow_up

-- Sessions
M.sessions = sessions.sessions
M.format_session = sessions.format_session
M.resume_session = sessions.resume_session
M.resume = sessions.resume

--- Open the daemon's log (setup{log_file}), or Neovim's lsp.log where the daemon's stderr goes otherwise.
function M.log()
  local path = config.options.log_file
  if not path then
    path = vim.lsp.get_log_path()
  end
  vim.cmd('split ' .. vim.fn.fnameescape(path))
  vim.cmd('normal! G')
end

--- Show or focus the transcript.
function M.open()
  ui.open(true)
end

--- Stop the daemon (cancels its live runs). The next command starts it again.
---@param wait_ms integer?
function M.stop(wait_ms)
  daemon.stop(wait_ms)
end

--- A summary of the plugin state.
function M.status()
  local conn = M.state.conn
  return {
    running = conn ~= nil and conn:is_alive(),
    session_id = M.state.session_id,
    run_id = M.state.run_id,
    workspace = config.workspace(),
    pending_approvals = vim.tbl_count(approval.pending),
  }
end

local augroup

--- Configure the plugin (see :help kgent-config). Safe to call again: a running daemon is restarted on next use.
---@param opts table?
function M.setup(opts)
  config.setup(opts)
  if M.state.conn then
    M.stop(0)
  end
  require('kgent.commands').register()
  augroup = vim.api.nvim_create_augroup('kgent', { clear = true })
  vim.api.nvim_create_autocmd('VimLeavePre', {
    group = augroup,
    callback = function()
      M.stop(0)
    end,
  })
  M._setup_done = true
end

return M
