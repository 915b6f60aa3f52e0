-- Kgent for Neovim: the Lua API (mirrors :Kgent) and the glue between the daemon connection (kgent.rpc), the
-- transcript (kgent.ui, kgent.transcript, kgent.render) and approvals (kgent.approval). See :help kgent.
local config = require('kgent.config')
local rpc = require('kgent.rpc')
local ui = require('kgent.ui')
local render = require('kgent.render')
local approval = require('kgent.approval')

local M = {}

---@class kgent.Run
---@field id string
---@field session_id string
---@field workspace string
---@field live boolean
---@field result table?  its run_end event
---@field conn kgent.Conn  the daemon running it

---@class kgent.State
---@field conn kgent.Conn?
---@field session_id string?  the session `:Kgent run` continues (nil: the next run starts a new one)
---@field session_workspace string?
---@field run_id string?  the latest live run (target of cancel, steer, followup)
---@field runs table<string, kgent.Run>
M.state = { conn = nil, session_id = nil, session_workspace = nil, run_id = nil, runs = {} }

local function notify(msg, level)
  vim.notify('kgent: ' .. msg, level or vim.log.levels.INFO)
end

local function emit(pattern, data)
  pcall(vim.api.nvim_exec_autocmds, 'User', { pattern = pattern, data = data, modeline = false })
end

local function abs_path(workspace, p)
  if p:sub(1, 1) == '/' then
    return p
  end
  return vim.fs.normalize(workspace .. '/' .. p)
end

--- :checktime the loaded buffers of files the run changed: unmodified ones are reloaded (autoread for the
--- occasion), modified ones get Neovim's usual "changed on disk" warning.
---@param run kgent.Run
---@param ev table
function M.reload_changed(run, ev)
  if not config.options.reload_changed then
    return
  end
  -- Compare real paths: the daemon resolves symlinks (/tmp on macOS is /private/tmp), buffer names may not.
  local function real(p)
    return vim.uv.fs_realpath(p) or vim.fs.normalize(p)
  end
  local wanted = {}
  for _, p in ipairs(ev.changedPaths or {}) do
    wanted[real(abs_path(run.workspace, p))] = true
  end
  if next(wanted) == nil then
    return
  end
  local global_autoread = vim.o.autoread
  vim.o.autoread = true
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) and vim.bo[buf].buftype == '' then
      local name = vim.api.nvim_buf_get_name(buf)
      if name ~= '' and wanted[real(name)] then
        local ok, err = pcall(vim.cmd, 'checktime ' .. buf)
        if not ok then
          notify(('could not reload %s: %s'):format(name, err), vim.log.levels.WARN)
        end
      end
    end
  end
  vim.o.autoread = global_autoread
end

-- Daemon messages -------------------------------------------------------------------------------------------------

local handlers = {}

function handlers.on_event(params, conn)
  local ev = params.event
  if type(ev) ~= 'table' or not params.runId then
    return
  end
  local run = M.state.runs[params.runId]
  if not run then
    run = { id = params.runId, session_id = params.sessionId, workspace = ev.workspace or config.workspace(),
      live = true, conn = conn }
    M.state.runs[params.runId] = run
  end
  if ev.type == 'run_start' and ev.workspace then
    run.workspace = ev.workspace
  end
  render.on_event(run, ev)
  emit('KgentEvent', params)
  if ev.type == 'run_end' then
    run.live = false
    run.result = ev
    if M.state.run_id == run.id then
      M.state.run_id = nil
    end
    M.reload_changed(run, ev)
    local level = ev.status == 'failed' and vim.log.levels.WARN or vim.log.levels.INFO
    local msg = ('run %s'):format(ev.status or 'ended')
    if #(ev.changedPaths or {}) > 0 then
      msg = msg .. (': %d file%s changed'):format(#ev.changedPaths, #ev.changedPaths == 1 and '' or 's')
    end
    if type(ev.error) == 'table' and ev.error.message then
      msg = msg .. ': ' .. ev.error.message
    end
    notify(msg, level)
    emit('KgentRunEnd', { runId = run.id, sessionId = run.session_id, event = ev })
  end
end

function handlers.on_withdraw(id)
  local prompt = approval.pending[id]
  if approval.withdraw(id) then
    local tc = prompt and prompt.params.toolCall or {}
    notify(('approval withdrawn by the daemon (run cancelled or ended, or timed out): %s'):format(tc.title or id))
  end
end

approval.on_done = function(prompt, result, how)
  render.permission_done(prompt.params, how)
  emit('KgentPermissionDone', { requestId = prompt.id, result = result, how = how })
end

local function on_exit(conn, code, signal)
  approval.withdraw_all(conn)
  for _, run in pairs(M.state.runs) do
    if run.live and run.conn == conn then
      run.live = false
      ui.note(('run %s: the daemon exited before it ended'):format(run.id))
    end
  end
  if M.state.run_id and not (M.state.runs[M.state.run_id] or {}).live then
    M.state.run_id = nil
  end
  if M.state.conn == conn then
    M.state.conn = nil
  end
  if not conn.stopping and code ~= 0 then
    notify(('the daemon exited (code %d, signal %d); see :Kgent log'):format(code, signal or 0), vim.log.levels.ERROR)
  end
end

-- Connection ------------------------------------------------------------------------------------------------------

--- The daemon connection, started on first use.
---@return kgent.Conn?, string?
function M.connection()
  local c = M.state.conn
  if c and c:is_alive() then
    return c
  end
  local conn
  local h = vim.tbl_extend('force', handlers, {
    on_event = function(params)
      handlers.on_event(params, conn)
    end,
    on_permission = function(params, respond)
      emit('KgentPermission', params)
      approval.ask(params, respond, conn)
    end,
    on_exit = function(code, signal)
      on_exit(conn, code, signal)
    end,
  })
  local err
  conn, err = rpc.start({
    cmd = config.options.cmd,
    env = config.env(),
    settings = config.settings(),
    handlers = h,
  })
  if not conn then
    return nil, err
  end
  M.state.conn = conn
  return conn
end

local function with_conn(fn)
  local conn, err = M.connection()
  if not conn then
    notify(err or 'cannot start the daemon', vim.log.levels.ERROR)
    return nil
  end
  return fn(conn)
end

--- The daemon's `initialize` result (waits for it; starts the daemon if needed).
---@return table? result, string? err
function M.server_info(timeout_ms)
  local conn, err = M.connection()
  if not conn then
    return nil, err
  end
  local e, r = conn:wait_ready(timeout_ms)
  if e then
    return nil, rpc.format_error(e)
  end
  return r
end

-- Runs ------------------------------------------------------------------------------------------------------------

--- The prompt blocks for a selection: the prompt text, then the lines as a `resource` block.
---@param prompt string
---@param sel {buf: integer, line1: integer, line2: integer}
---@return table[]
function M.selection_prompt(prompt, sel)
  local buf = sel.buf or 0
  local lines = vim.api.nvim_buf_get_lines(buf, sel.line1 - 1, sel.line2, false)
  local name = vim.api.nvim_buf_get_name(buf)
  local uri
  if name ~= '' then
    uri = vim.uri_from_fname(vim.fn.fnamemodify(name, ':p'))
  else
    uri = ('untitled:buffer-%d'):format(vim.fn.bufnr(buf))
  end
  uri = ('%s#L%d-L%d'):format(uri, sel.line1, sel.line2)
  local resource = { uri = uri, text = table.concat(lines, '\n') }
  local ft = vim.bo[buf].filetype
  if ft ~= '' then
    resource.mimeType = 'text/x-' .. ft
  end
  return {
    { type = 'text', text = prompt },
    { type = 'resource', resource = resource },
  }
end

---@class kgent.RunOpts
---@field selection {buf: integer, line1: integer, line2: integer}?  send these lines as context
---@field new_session boolean?  start a new session instead of continuing the current one
---@field session_id string?  continue this session
---@field parent_entry_id string?  with session_id: continue from this entry (a one-off fork)
---@field workspace string?
---@field mode string?
---@field provider string?
---@field model string?

--- Start a run. It continues the current session (the last run's, or the resumed one) unless `new_session`.
---@param prompt string|table[]
---@param opts kgent.RunOpts?
---@param cb fun(err: table?, result: {runId: string, sessionId: string}?)?
function M.run(prompt, opts, cb)
  opts = opts or {}
  cb = cb or function() end
  if prompt == nil or prompt == '' or (type(prompt) == 'table' and #prompt == 0) then
    notify('give a prompt: :Kgent run {prompt}', vim.log.levels.WARN)
    return cb({ message = 'empty prompt' })
  end
  if type(prompt) == 'string' and opts.selection then
    prompt = M.selection_prompt(prompt, opts.selection)
  end
  return with_conn(function(conn)
    local ws = opts.workspace or config.workspace()
    local params = { prompt = prompt, workspace = ws }
    local sid = opts.session_id
    if not sid and not opts.new_session and M.state.session_id then
      if M.state.session_workspace == nil or M.state.session_workspace == ws then
        sid = M.state.session_id
      else
        notify(('the workspace changed to %s: starting a new session'):format(ws))
      end
    end
    if sid then
      params.sessionId = sid
      params.parentEntryId = opts.parent_entry_id
      if opts.session_id and not opts.workspace then
        params.workspace = nil -- the session's own
      end
    end
    params.mode = opts.mode
    params.provider = opts.provider
    params.model = opts.model
    if config.options.transcript.open_on_run then
      ui.open()
    end
    conn:request('agent/run', params, function(err, res)
      if err then
        local data = type(err.data) == 'table' and err.data or {}
        local msg = rpc.format_error(err)
        if data.code == 'session_busy' then
          msg = msg .. ' — use :Kgent steer / :Kgent followup, or :Kgent cancel'
        end
        notify(msg, vim.log.levels.ERROR)
        ui.note('could not start the run: ' .. msg)
        return cb(err)
      end
      local run = M.state.runs[res.runId] or { id = res.runId, live = true, conn = conn }
      run.session_id = res.sessionId
      run.workspace = run.workspace or params.workspace or M.state.session_workspace or ws
      M.state.runs[res.runId] = run
      if run.live then
        M.state.run_id = res.runId
      end
      M.state.session_id = res.sessionId
      M.state.session_workspace = run.workspace
      cb(nil, res)
    end)
  end)
end

--- Forget the current session: the next run starts a new one.
function M.new_session()
  M.state.session_id = nil
  M.state.session_workspace = nil
  ui.note('new session: the next run starts a new conversation')
end

local function live_run(run_id)
  local id = run_id or M.state.run_id
  if not id or not (M.state.runs[id] and M.state.runs[id].live) then
    return nil
  end
  return id
end

--- Cancel the current run (or `run_id`). Its open prompts are withdrawn by the daemon.
---@param run_id string?
---@param cb fun(err: table?, result: {cancelled: boolean}?)?
function M.cancel(run_id, cb)
  cb = cb or function() end
  local id = live_run(run_id)
  if not id then
    notify('no live run to cancel', vim.log.levels.WARN)
    return cb({ message = 'no live run' })
  end
  with_conn(function(conn)
    conn:request('agent/cancel', { runId = id }, function(err, res)
      if err then
        notify('cancel: ' .. rpc.format_error(err), vim.log.levels.ERROR)
      elseif res and res.cancelled == false then
        notify('the run had already ended')
      end
      cb(err, res)
    end)
  end)
end

local function queue_message(method, text, cb)
  cb = cb or function() end
  if not text or text == '' then
    notify('give a message', vim.log.levels.WARN)
    return cb({ message = 'empty message' })
  end
  local id = live_run()
  if not id then
    notify('no live run: use :Kgent run to continue the session', vim.log.levels.WARN)
    return cb({ message = 'no live run' })
  end
  with_conn(function(conn)
    conn:request(method, { runId = id, text = text }, function(err, res)
      if err then
        notify(rpc.format_error(err), vim.log.levels.ERROR)
      end
      cb(err, res)
    end)
  end)
end

--- Steer the current run: the model sees `text` after the current tool batch.
function M.steer(text, cb)
  queue_message('agent/steer', text, cb)
end

--- Follow up on the current run: `text` is delivered when it would otherwise settle.
function M.follow_up(text, cb)
  queue_message('agent/followUp', text, cb)
end

-- Sessions --------------------------------------------------------------------------------------------------------

--- The workspace's sessions, most recent first: cb(err, sessions).
---@param cb fun(err: table?, sessions: table[]?)
---@param workspace string?
function M.sessions(cb, workspace)
  with_conn(function(conn)
    conn:request('agent/sessions', { workspace = workspace or config.workspace() }, function(err, res)
      cb(err, res and res.sessions or nil)
    end)
  end)
end

---@param s table SessionInfo
---@return string
function M.format_session(s)
  local when = (s.updated or ''):gsub('T', ' '):gsub('%.%d+Z$', 'Z')
  local title = (s.title or ''):match('^[^\n]*')
  if #title > 60 then
    title = title:sub(1, 57) .. '...'
  end
  return ('%s  %s  (%d entries)  %s%s'):format(s.sessionId or '?', when, s.entryCount or 0, title,
    s.liveRunId and '  [running]' or '')
end

--- Make `session_id` the current session and show its conversation in the transcript.
---@param session_id string
---@param cb fun(err: table?, session: table?)?
function M.resume_session(session_id, cb)
  cb = cb or function() end
  with_conn(function(conn)
    conn:request('agent/session', { sessionId = session_id, branchOnly = true }, function(err, s)
      if err then
        notify('resume: ' .. rpc.format_error(err), vim.log.levels.ERROR)
        return cb(err)
      end
      M.state.session_id = s.sessionId or session_id
      M.state.session_workspace = s.workspace
      if s.liveRunId then
        M.state.run_id = s.liveRunId
      end
      render.render_session(s)
      ui.open()
      notify(('resumed session %s; :Kgent run continues it'):format(M.state.session_id))
      cb(nil, s)
    end)
  end)
end

--- Pick a session of the workspace (vim.ui.select) and resume it; then run `prompt` in it if given.
---@param opts {session_id: string?, prompt: string?}?
---@param cb fun(err: table?, session: table?)?
function M.resume(opts, cb)
  opts = opts or {}
  cb = cb or function() end
  local function go(id)
    M.resume_session(id, function(err, s)
      if not err and opts.prompt and opts.prompt ~= '' then
        M.run(opts.prompt, { session_id = id })
      end
      cb(err, s)
    end)
  end
  if opts.session_id then
    return go(opts.session_id)
  end
  M.sessions(function(err, sessions)
    if err then
      notify('sessions: ' .. rpc.format_error(err), vim.log.levels.ERROR)
      return cb(err)
    end
    if #sessions == 0 then
      notify('no sessions for ' .. config.workspace())
      return cb({ message = 'no sessions' })
    end
    vim.ui.select(sessions, {
      prompt = 'Resume a Kgent session',
      kind = 'kgent.session',
      format_item = M.format_session,
    }, function(choice)
      vim.schedule(function()
        if choice then
          go(choice.sessionId)
        else
          cb({ message = 'no session picked' })
        end
      end)
    end)
  end)
end

-- Misc ------------------------------------------------------------------------------------------------------------

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
  local conn = M.state.conn
  M.state.conn = nil
  if conn then
    conn:stop(wait_ms)
  end
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
