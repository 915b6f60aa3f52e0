-- The daemon connection as the plugin uses it: started on first use, stopped on request, and what arrives over it
-- routed — events to the runs' state, the transcript and `User KgentEvent`/`KgentRunEnd` (with :checktime of the
-- changed buffers at run end), permission requests and withdrawals to kgent.approval, the exit to every live run.
local config = require('kgent.config')
local rpc = require('kgent.rpc')
local render = require('kgent.render')
local transcript = require('kgent.transcript')
local approval = require('kgent.approval')
local S = require('kgent.state')

local state, notify = S.state, S.notify

local M = {}

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
  local run = state.runs[params.runId]
  if not run then
    run = { id = params.runId, session_id = params.sessionId, workspace = ev.workspace or config.workspace(),
      live = true, conn = conn }
    state.runs[params.runId] = run
  end
  if ev.type == 'run_start' and ev.workspace then
    run.workspace = ev.workspace
  end
  render.on_event(run, ev)
  emit('KgentEvent', params)
  if ev.type == 'run_end' then
    run.live = false
    run.result = ev
    if state.run_id == run.id then
      state.run_id = nil
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
  for _, run in pairs(state.runs) do
    if run.live and run.conn == conn then
      run.live = false
      transcript.note(('run %s: the daemon exited before it ended'):format(run.id))
    end
  end
  if state.run_id and not (state.runs[state.run_id] or {}).live then
    state.run_id = nil
  end
  if state.conn == conn then
    state.conn = nil
  end
  if not conn.stopping and code ~= 0 then
    notify(('the daemon exited (code %d, signal %d); see :Kgent log'):format(code, signal or 0), vim.log.levels.ERROR)
  end
end

-- Connection ------------------------------------------------------------------------------------------------------

--- The daemon connection, started on first use.
---@return kgent.Conn?, string?
function M.connection()
  local c = state.conn
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
  state.conn = conn
  return conn
end

--- Call fn(conn) with the connection (started if needed); say so and return nil if the daemon cannot start.
function M.with_conn(fn)
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

--- Stop the daemon (cancels its live runs). The next command starts it again.
---@param wait_ms integer?
function M.stop(wait_ms)
  local conn = state.conn
  state.conn = nil
  if conn then
    conn:stop(wait_ms)
  end
end

return M
