-- The daemon connection as the plugin uses it: started on first use, stopped on request, and what arrives over it
-- routed — events to the runs' state, the transcript and `User KgentEvent`/`KgentRunEnd` (with :checktime of the
-- changed buffers at run end), permission requests and withdrawals to kgent.approval, the exit to every live run.
local config = require('kgent.config')
local rpc = require('kgent.rpc')
local render = require('kgent.render')
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
  M.reload_paths(run.workspace, ev.changedPaths)
end

--- :checktime the loaded buffers of `paths` (absolute, or relative to `workspace`).
---@param workspace string
---@param paths string[]?
function M.reload_paths(workspace, paths)
  if not config.options.reload_changed then
    return
  end
  -- Compare real paths: the daemon resolves symlinks (/tmp on macOS is /private/tmp), buffer names may not.
  local function real(p)
    return vim.uv.fs_realpath(p) or vim.fs.normalize(p)
  end
  local wanted = {}
  for _, p in ipairs(paths or {}) do
    wanted[real(abs_path(workspace, p))] = true
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
    run = {
      id = params.runId,
      session_id = params.sessionId,
      workspace = ev.workspace or config.workspace(),
      live = true,
      conn = conn,
    }
    state.runs[params.runId] = run
  end
  run.session_id = params.sessionId or run.session_id
  run.parent = params.parentRunId or run.parent -- a sub-agent's run (the `task` tool)
  if ev.type == 'run_start' and ev.workspace then
    run.workspace = ev.workspace
  end
  render.on_event(run, ev)
  if run.parent then
    run.live = ev.type ~= 'run_end'
    emit('KgentEvent', params)
    return
  end
  if ev.type == 'tool_update' and ev.status == 'in_progress' and conn then
    M.snapshot_children(conn)
    M.watch_children(conn)
  end
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
      msg = msg .. (': %d file%s changed (:Kgent review)'):format(#ev.changedPaths, #ev.changedPaths == 1 and '' or 's')
    end
    if type(ev.error) == 'table' and ev.error.message then
      msg = msg .. ': ' .. ev.error.message
    end
    notify(msg, level)
    emit('KgentRunEnd', { runId = run.id, sessionId = run.session_id, event = ev })
    pcall(vim.cmd.redrawstatus, { bang = true })
  elseif ev.type == 'run_start' then
    pcall(vim.cmd.redrawstatus, { bang = true })
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

M.describe_exit = rpc.describe_exit

--- Remember the daemon's child processes (the commands its tools run, each the leader of its own process group) so
--- that they can be ended if the daemon is killed: they would otherwise run on, reparented to PID 1.
---@param conn kgent.Conn
function M.snapshot_children(conn)
  if not conn.pid then
    return
  end
  local ok, kids = pcall(vim.api.nvim_get_proc_children, conn.pid)
  conn.children = conn.children or {}
  for _, pid in ipairs(ok and kids or {}) do
    conn.children[pid] = true
  end
end

function M.watch_children(conn)
  if conn.child_timer or not conn.pid then
    return
  end
  local timer = vim.uv.new_timer()
  conn.child_timer = timer
  timer:start(
    0,
    1000,
    vim.schedule_wrap(function()
      if conn.closed then
        if not timer:is_closing() then
          timer:stop()
          timer:close()
        end
        return
      end
      M.snapshot_children(conn)
    end)
  )
end

local function end_children(conn)
  for pid in pairs(conn.children or {}) do
    -- Only a process still there and reparented (its parent, the daemon, is gone).
    local ok, info = pcall(vim.api.nvim_get_proc, pid)
    if ok and info and info.ppid ~= conn.pid then
      pcall(vim.uv.kill, -pid, 'sigterm')
      pcall(vim.uv.kill, pid, 'sigterm')
    end
  end
end

local function on_exit(conn, code, signal)
  local expected = conn.stopping
  local how = M.describe_exit(code, signal)
  M.log(
    expected and 'INFO' or 'ERROR',
    ('the daemon (pid %s) %s%s'):format(conn.pid or '?', how, expected and ' after :Kgent stop' or '')
  )
  approval.withdraw_all(conn)
  local lost = {}
  for _, run in pairs(state.runs) do
    if run.live and run.conn == conn then
      run.live = false
      run.lost = true
      lost[#lost + 1] = run
    end
  end
  if state.run_id and not (state.runs[state.run_id] or {}).live then
    state.run_id = nil
  end
  if state.conn == conn then
    state.conn = nil
  end
  local reason = expected and 'the daemon was stopped' or ('the daemon ' .. how)
  for _, run in ipairs(lost) do
    local paths = render.lost(run, reason)
    M.reload_paths(run.workspace, paths)
    emit('KgentRunEnd', { runId = run.id, sessionId = run.session_id, event = { type = 'run_end', status = 'lost' } })
  end
  if not expected and conn.pid then
    -- The daemon leads its process group (vim.system detaches it), its commands lead their own: end what it left
    -- running.
    pcall(vim.uv.kill, -conn.pid, 'sigterm')
    end_children(conn)
  end
  if not expected then
    state.died = { code = code, signal = signal, how = how }
    local msg = ('the daemon %s'):format(how)
    if not conn.ready then
      msg = msg .. ' before it answered initialize'
    end
    if #lost > 0 then
      msg = msg .. (': %d run%s lost'):format(#lost, #lost == 1 and '' or 's')
    end
    notify(msg .. '. :Kgent restart starts it again; :Kgent log shows its log', vim.log.levels.ERROR)
  end
  pcall(vim.cmd.redrawstatus, { bang = true })
end

--- Append a line to the log file (setup{log_file}) in the daemon's format, so that :Kgent log tells the daemon's
--- life (started, ready, exited) even when the daemon itself logs nothing at the level asked for.
---@param level string
---@param msg string
function M.log(level, msg)
  local path = config.options.log_file
  local want = vim.log.levels[(config.options.log_level or 'WARNING'):upper():gsub('WARNING', 'WARN')]
    or vim.log.levels.WARN
  local have = vim.log.levels[level:gsub('WARNING', 'WARN')] or vim.log.levels.INFO
  if not path or have < want then
    return
  end
  local f = io.open(path, 'a')
  if f then
    f:write(('%s %s kgent.nvim: %s\n'):format(os.date('!%Y-%m-%d %H:%M:%S'), level, msg))
    f:close()
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
    on_file_request = function(method, params)
      return require('kgent.files').serve(method, params)
    end,
    on_diagnostics = function(params, respond)
      require('kgent.diagnostics').serve(params, respond)
    end,
  })
  local err
  local t0 = vim.uv.hrtime()
  conn, err = rpc.start({
    cmd = config.options.cmd,
    env = config.env(),
    settings = config.settings(),
    capabilities = config.capabilities(),
    handlers = h,
    on_ready = function(ready)
      local si = ready.init_result and ready.init_result.serverInfo or {}
      M.log(
        'INFO',
        ('the daemon (pid %s) is ready: %s %s, protocol %s, %.0f ms after the start'):format(
          ready.pid or '?',
          si.name or '?',
          si.version or '?',
          tostring(ready.init_result and ready.init_result.protocolVersion),
          (vim.uv.hrtime() - t0) / 1e6
        )
      )
      pcall(vim.cmd.redrawstatus, { bang = true })
    end,
  })
  if not conn then
    M.log('ERROR', err)
    return nil, err
  end
  M.log('INFO', ('started the daemon (pid %s): %s'):format(conn.pid or '?', table.concat(config.options.cmd, ' ')))
  state.conn = conn
  state.died = nil
  return conn
end

--- Start the daemon in the background if it is not running (setup{ prewarm }); errors are reported when a command
--- needs it.
function M.prewarm()
  local c = state.conn
  if c and c:is_alive() then
    return c
  end
  local conn = M.connection()
  if conn then
    -- The daemon answers `initialize` before it has loaded what requests need (the session store, the kernel: seconds
    -- on a busy machine): one cheap request now pays that here instead of on the first run.
    local t0 = vim.uv.hrtime()
    conn:request('agent/sessions', { workspace = config.workspace() }, function(err)
      if not err then
        conn.warm = true
        M.log('INFO', ('the daemon is warm (%.0f ms after the start)'):format((vim.uv.hrtime() - t0) / 1e6))
      end
    end)
  end
  return conn
end

--- Stop the daemon if it runs and start it again (after a crash: the offered way back).
function M.restart()
  M.stop(5000)
  local conn, err = M.connection()
  if not conn then
    notify(err or 'cannot start the daemon', vim.log.levels.ERROR)
    return nil
  end
  notify('restarting the daemon…')
  conn:request('agent/sessions', { workspace = config.workspace() }, function(e)
    if not e then
      notify('the daemon is running again')
    end
  end)
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
