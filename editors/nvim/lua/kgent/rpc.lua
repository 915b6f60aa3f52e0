-- The connection to `kgent serve --stdio` (protocol.md): spawn, `initialize`, requests, and the daemon's own
-- messages (agent/event, agent/permission, $/cancelRequest). Transport only: no UI here.
--
-- Built on vim.lsp.rpc, a generic Content-Length JSON-RPC client (no LSP `initialize` is sent by it). Things it
-- does that shape this module:
--   * notifications are dispatched from a libuv callback: everything is vim.schedule()d before it touches the
--     editor (schedule keeps wire order, as responses and server requests are scheduled too);
--   * server_request runs in a coroutine and may yield: that is how an approval waits for the user;
--   * a -32800 reply never reaches the callback; the only request we could cancel is agent/compact.
local M = {}

local PROTOCOL_VERSION = 1
M.PROTOCOL_VERSION = PROTOCOL_VERSION

---@class kgent.Handlers
---@field on_event fun(params: table)  an agent/event notification's params
---@field on_permission fun(params: table, respond: fun(result: table))  respond exactly once
---@field on_withdraw fun(request_id: string)  the daemon withdrew an agent/permission request
---@field on_exit fun(code: integer, signal: integer)
---@field on_file_request fun(method: string, params: table): table  agent/readTextFile, …: the result to send
---@field on_diagnostics? fun(params: table, respond: fun(result: table))  agent/diagnostics: respond once settled

---@class kgent.Conn
---@field client vim.lsp.rpc.PublicClient?
---@field ready boolean  `initialize` answered
---@field init_result table?  the `initialize` result
---@field init_error table?
---@field queue table[]  requests waiting for `initialize`
---@field closed boolean
---@field exit_code integer?
local Conn = {}
Conn.__index = Conn

local SIGNALS = {
  [1] = 'SIGHUP',
  [2] = 'SIGINT',
  [6] = 'SIGABRT',
  [9] = 'SIGKILL',
  [11] = 'SIGSEGV',
  [13] = 'SIGPIPE',
  [15] = 'SIGTERM',
}

--- How a process ended, in words: "was killed by signal 9 (SIGKILL)" or "exited with code 1". (vim.system reports
--- a death by signal as code 0 plus the signal.)
---@param code integer?
---@param signal integer?
---@return string
function M.describe_exit(code, signal)
  if signal and signal ~= 0 then
    return ('was killed by signal %d%s'):format(signal, SIGNALS[signal] and (' (' .. SIGNALS[signal] .. ')') or '')
  end
  return ('exited with code %d'):format(code or 0)
end

--- Format a JSON-RPC error object for people: "message (data.code)".
---@param err table|string|nil
---@return string
function M.format_error(err)
  if type(err) ~= 'table' then
    return tostring(err)
  end
  local msg = err.message or ('error ' .. tostring(err.code))
  if type(err.data) == 'table' and err.data.code and not msg:find(err.data.code, 1, true) then
    msg = ('%s (%s)'):format(msg, err.data.code)
  end
  return msg
end

local function plugin_version()
  return '0.2.0'
end
M.plugin_version = plugin_version

--- Spawn the daemon and send `initialize`. Requests made before its answer are queued and sent after it.
---@param opts {cmd: string[], env: table, cwd: string?, settings: table, capabilities: table?, handlers: kgent.Handlers, on_ready: fun(c: kgent.Conn)?}
---@return kgent.Conn?, string?  the connection, or nil and why it could not start
function M.start(opts)
  local self = setmetatable({ ready = false, queue = {}, closed = false }, Conn)
  local h = opts.handlers

  local dispatchers = {
    notification = function(method, params)
      vim.schedule(function()
        if method == 'agent/event' then
          h.on_event(params or {})
        elseif method == '$/cancelRequest' then
          if params and params.id ~= nil then
            h.on_withdraw(tostring(params.id))
          end
        end
        -- Unknown notifications are ignored (protocol.md: Versioning).
      end)
    end,
    server_request = function(method, params)
      if method == 'agent/readTextFile' or method == 'agent/writeTextFile' or method == 'agent/saveFiles' then
        -- Runs on the main loop (vim.lsp.rpc schedules server requests): buffers may be read and changed here.
        local ok, result = pcall(h.on_file_request, method, params or {})
        if not ok then
          return nil, vim.lsp.rpc.rpc_response_error(vim.lsp.protocol.ErrorCodes.InternalError, tostring(result))
        end
        return result
      end
      local answer = h.on_permission
      if method == 'agent/diagnostics' and h.on_diagnostics then
        answer = h.on_diagnostics -- answered later, as an approval is: once the buffer's diagnostics settled
      elseif method ~= 'agent/permission' then
        return nil, vim.lsp.rpc.rpc_response_error(vim.lsp.protocol.ErrorCodes.MethodNotFound)
      end
      local co = coroutine.running()
      local answered, result = false, nil
      local waiting = false
      local function respond(r)
        if answered then
          return
        end
        answered, result = true, r
        if waiting then
          vim.schedule(function()
            local ok, err = coroutine.resume(co, r)
            if not ok then
              vim.notify('kgent: answering an approval failed: ' .. tostring(err), vim.log.levels.ERROR)
            end
          end)
        end
      end
      local ok, err = pcall(answer, params or {}, respond)
      if not ok and method == 'agent/diagnostics' then
        return nil, vim.lsp.rpc.rpc_response_error(vim.lsp.protocol.ErrorCodes.InternalError, tostring(err))
      end
      if not ok then
        -- A broken UI must not approve anything: reject.
        vim.notify('kgent: approval prompt failed: ' .. tostring(err), vim.log.levels.ERROR)
        return { outcome = 'cancelled' }
      end
      if not answered then
        waiting = true
        result = coroutine.yield()
      end
      return result or { outcome = 'cancelled' }
    end,
    on_exit = function(code, signal)
      vim.schedule(function()
        self.closed = true
        self.exit_code = code
        self.exit_signal = signal
        self:_fail_queue({
          code = -32099,
          message = 'the kgent daemon ' .. M.describe_exit(code, signal),
          data = { code = 'daemon_exited' },
        })
        h.on_exit(code, signal)
      end)
    end,
    on_error = function(code, err)
      -- Transport-level problems (unreadable frames, handler errors): log them, the connection goes on.
      vim.schedule(function()
        vim.notify(
          ('kgent: rpc error %s: %s'):format(vim.lsp.rpc.client_errors[code] or code, vim.inspect(err)),
          vim.log.levels.WARN
        )
      end)
    end,
  }

  local env = vim.tbl_extend('force', {}, opts.env or {})
  local exe = opts.cmd[1]
  if vim.fn.executable(exe) ~= 1 then
    return nil,
      ('cannot start the daemon: `%s` is not an executable%s (setup{ cmd }; see :checkhealth kgent)'):format(
        exe,
        exe:find('/', 1, true) and '' or ' on PATH'
      )
  end
  local before = {}
  for _, pid in ipairs(vim.api.nvim_get_proc_children(vim.fn.getpid())) do
    before[pid] = true
  end
  local ok, client = pcall(vim.lsp.rpc.start, opts.cmd, dispatchers, { cwd = opts.cwd, env = env })
  if not ok then
    -- vim.lsp.rpc words its errors for language servers: say it in ours, without its file and line.
    local why = tostring(client):match('ENOENT') and 'not found' or tostring(client):gsub('^.-:%d+: ', '')
    return nil, ('cannot start the daemon `%s`: %s'):format(table.concat(opts.cmd, ' '), why)
  end
  self.client = client
  -- The daemon's pid (vim.lsp.rpc does not tell it): the child that was not there before. For the log and the
  -- clean-up of what a killed daemon leaves behind.
  for _, pid in ipairs(vim.api.nvim_get_proc_children(vim.fn.getpid())) do
    if not before[pid] then
      self.pid = pid
    end
  end

  self:_send('initialize', {
    protocolVersion = PROTOCOL_VERSION,
    clientInfo = { name = 'kgent.nvim', version = plugin_version() },
    capabilities = opts.capabilities or vim.empty_dict(),
    settings = opts.settings or vim.empty_dict(),
  }, function(err, result)
    if err then
      self.init_error = err
      self:_fail_queue(err)
      return
    end
    if type(result) ~= 'table' or result.protocolVersion ~= PROTOCOL_VERSION then
      -- protocol.md: a client that cannot live with the answer should `exit`.
      self.init_error = {
        code = -32099,
        message = ('the daemon speaks protocol version %s; this plugin speaks %d: update one of them'):format(
          tostring(type(result) == 'table' and result.protocolVersion),
          PROTOCOL_VERSION
        ),
      }
      self.init_result = result
      self:_fail_queue(self.init_error)
      self:stop()
      return
    end
    self.init_result = result
    self.ready = true
    if opts.on_ready then
      pcall(opts.on_ready, self)
    end
    local queue = self.queue
    self.queue = {}
    for _, q in ipairs(queue) do
      self:_send(q[1], q[2], q[3])
    end
  end)
  return self
end

function Conn:_fail_queue(err)
  local queue = self.queue
  self.queue = {}
  for _, q in ipairs(queue) do
    q[3](err, nil)
  end
end

function Conn:_send(method, params, cb)
  if self.closed or not self.client or self.client.is_closing() then
    vim.schedule(function()
      cb({ code = -32099, message = 'the kgent daemon is not running' }, nil)
    end)
    return
  end
  local ok = self.client.request(method, params, cb)
  if not ok then
    vim.schedule(function()
      cb({ code = -32099, message = 'could not write to the kgent daemon' }, nil)
    end)
  end
end

--- Send a request; `cb(err, result)` runs on the main loop. Waits for `initialize` to be answered first.
---@param method string
---@param params table?
---@param cb fun(err: table?, result: any)?
function Conn:request(method, params, cb)
  cb = cb or function() end
  params = params or vim.empty_dict()
  if self.init_error then
    local e = self.init_error
    vim.schedule(function()
      cb(e, nil)
    end)
  elseif self.ready then
    self:_send(method, params, cb)
  else
    table.insert(self.queue, { method, params, cb })
  end
end

--- Send a request and wait for its answer (pumping the event loop). For :checkhealth and tests.
---@return table? err, any result
function Conn:request_sync(method, params, timeout_ms)
  local done, e, r = false, nil, nil
  self:request(method, params, function(err, result)
    done, e, r = true, err, result
  end)
  if not vim.wait(timeout_ms or 5000, function()
    return done
  end, 10) then
    return { code = -32099, message = ('no answer to %s within %d ms'):format(method, timeout_ms or 5000) }, nil
  end
  return e, r
end

--- Wait (pumping the event loop) until `initialize` is answered.
---@return table? err, table? result
function Conn:wait_ready(timeout_ms)
  vim.wait(timeout_ms or 5000, function()
    return self.ready or self.init_error ~= nil or self.closed
  end, 10)
  if self.ready then
    return nil, self.init_result
  end
  return self.init_error or { code = -32099, message = 'the kgent daemon did not answer initialize' }, nil
end

function Conn:notify(method, params)
  if self.client and not self.client.is_closing() then
    self.client.notify(method, params or vim.empty_dict())
  end
end

function Conn:is_alive()
  return not self.closed and self.client ~= nil and not self.client.is_closing()
end

--- End the daemon: `exit` (it cancels live runs and exits within ~1 s), then SIGTERM if it is still there.
---@param wait_ms integer?  wait this long for it to go (0: do not wait)
function Conn:stop(wait_ms)
  self.stopping = true
  if not self:is_alive() then
    return
  end
  self:notify('exit')
  local client = self.client
  local timer = vim.uv.new_timer()
  timer:start(3000, 0, function()
    timer:close()
    if client and not client.is_closing() then
      pcall(client.terminate)
    end
  end)
  if wait_ms and wait_ms > 0 then
    vim.wait(wait_ms, function()
      return self.closed
    end, 10)
  end
end

return M
