-- Kgent for Neovim: setup{} and the Lua API (mirrors :Kgent). The API is made of: kgent.runs (run, cancel, steer,
-- follow-up), kgent.sessions (list, resume), kgent.daemon (the connection and what arrives over it), kgent.ui (the
-- transcript window) over kgent.state (the state below). See :help kgent.

-- Before anything else: the modules below use APIs of Neovim 0.10 (stdpath('log'), vim.uv, vim.system…), and the
-- README's `require('kgent').setup{}` runs before plugin/kgent.lua's own check. On an older Neovim this module is a
-- stand-in whose every function says so once, instead of a Lua error from deep inside.
if vim.fn.has('nvim-0.10') ~= 1 then
  local said = false
  local function needs()
    if not said then
      said = true
      vim.api.nvim_err_writeln('kgent.nvim needs Neovim 0.10 or later')
    end
  end
  return setmetatable({ unsupported = true }, {
    __index = function()
      return needs
    end,
  })
end
local config = require('kgent.config')
local ui = require('kgent.ui')
local approval = require('kgent.approval')
local daemon = require('kgent.daemon')
local runs = require('kgent.runs')
local sessions = require('kgent.sessions')
local transcript = require('kgent.transcript')
require('kgent.highlights')
require('kgent.approval_inline') -- gives transcript buffers the approval keys

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

-- Review (kgent.review): a session's changes hunk by hunk
function M.review(run_id)
  require('kgent.review').open(run_id)
end

-- Sessions
M.sessions = sessions.sessions
M.format_session = sessions.format_session
M.resume_session = sessions.resume_session
M.resume = sessions.resume

--- Open the current session as Markdown (default), HTML or JSON in a new buffer (kgent.export).
function M.export(format, cb)
  require('kgent.export').export(format, cb)
end

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

--- Restart the daemon (after it died: the way back the error message offers).
M.restart = daemon.restart

--- Open the chat under the transcript (kgent.chat); `opts.selection` goes with the next message.
function M.chat(opts)
  return require('kgent.chat').open(opts)
end

--- Send `text` as the chat would (a run, or while one is live a steering message or follow-up: `kind`).
function M.send(text, kind)
  return require('kgent.chat').send(text, kind)
end

--- Drop the chat's queued follow-ups.
function M.clear_queue()
  require('kgent.chat').clear_queue()
end

--- Answer the oldest pending approval (the one of the current transcript first) with the option of kind `which`
--- ("allow_once", "allow_always", "reject_once", "reject_always") or open its preview ("preview").
function M.approve(which)
  local inline = require('kgent.approval_inline')
  local buf = transcript.buf()
  if not inline.target(buf) then
    local first = vim.tbl_filter(function(p)
      return p.how == 'inline'
    end, approval.list())[1]
    if not first then
      return vim.notify('kgent: no approval is waiting', vim.log.levels.INFO)
    end
    buf = transcript.buf(first.params.sessionId)
  end
  inline.act(buf, which or 'allow_once')
end

--- Pick a transcript: the sessions of this Neovim (live first) and the workspace's past ones; a past one is resumed.
function M.transcripts()
  require('kgent.sessions').pick_transcript()
end

--- A summary of the plugin state.
function M.status()
  local conn = M.state.conn
  local live = 0
  for _, r in pairs(M.state.runs) do
    if r.live then
      live = live + 1
    end
  end
  return {
    running = conn ~= nil and conn:is_alive(),
    ready = conn ~= nil and conn.ready == true,
    session_id = M.state.session_id,
    run_id = M.state.run_id,
    live_runs = live,
    workspace = config.workspace(),
    pending_approvals = vim.tbl_count(approval.pending),
    died = M.state.died,
  }
end

--- For 'statusline' / 'winbar' / lualine: "kgent: idle", "kgent: starting…", "kgent: running N",
--- "kgent: waiting for you" (N approvals), "kgent: daemon died", or "" before the daemon was ever started.
---@return string
function M.statusline()
  local st = M.status()
  if st.pending_approvals > 0 then
    return st.pending_approvals == 1 and 'kgent: waiting for you'
      or ('kgent: waiting for you (%d)'):format(st.pending_approvals)
  end
  if st.died and not st.running then
    return 'kgent: daemon died'
  end
  if st.running and not st.ready then
    return 'kgent: starting…'
  end
  if st.live_runs > 0 then
    return ('kgent: running %d'):format(st.live_runs)
  end
  if st.running then
    return 'kgent: idle'
  end
  return ''
end

local augroup

--- Configure the plugin (see :help kgent-config). Safe to call again: a running daemon is restarted on next use.
---@param opts table?
function M.setup(opts)
  config.setup(opts)
  -- What :Kgent mode / provider / model chose gives way to the new configuration.
  M.state.mode, M.state.provider, M.state.model = nil, nil, nil
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
  if config.options.prewarm then
    -- In the background: the daemon's Python start-up (1-5 s) happens while you edit, not on your first run.
    vim.schedule(function()
      daemon.prewarm()
    end)
  end
end

return M
