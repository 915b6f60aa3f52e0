-- Choosing for the next runs without setup{} and :Kgent restart — the mode (:Kgent mode), the provider and model
-- (:Kgent provider, :Kgent model; any id the provider accepts may be typed) — and forking the session at one of its
-- user messages (:Kgent fork: the message goes back into the chat to edit and send again; the old branch stays).
local config = require('kgent.config')
local rpc = require('kgent.rpc')
local daemon = require('kgent.daemon')
local transcript = require('kgent.transcript')
local S = require('kgent.state')

local state, notify = S.state, S.notify

local M = {}

--- The daemon's capabilities (its initialize answer), if it is ready.
---@return table?
local function caps()
  local c = state.conn
  return c and c.init_result and c.init_result.capabilities or nil
end

--- What the next run uses: {mode, provider, model} (nil where the daemon's default applies).
function M.current()
  local o = config.options
  local c = caps() or {}
  return {
    mode = state.mode or o.mode or c.defaultMode,
    provider = state.provider or o.provider or c.defaultProvider,
    model = state.model or o.model or c.defaultModel,
  }
end

--- fn(err) once the daemon answered initialize (requests wait for that: one cheap request does).
local function when_ready(conn, fn)
  if conn.ready then
    return fn(nil)
  end
  conn:request('agent/sessions', { workspace = config.workspace() }, function(err)
    fn(err)
  end)
end

local function said()
  local cur = M.current()
  notify(('the next runs use mode %s, %s/%s'):format(cur.mode or '?', cur.provider or '?', cur.model or '?'))
end

--- The mode names the daemon offers (from initialize; the four built-in ones before it answered).
function M.modes()
  local c = caps()
  return c and c.modes or { 'plan', 'ask', 'auto', 'full' }
end

--- Set the mode of the next runs; without `name`, pick one.
---@param name string?
---@param cb fun(mode: string?)?
function M.mode(name, cb)
  cb = cb or function() end
  if name and name ~= '' then
    local norm = name:lower():gsub('-', '_')
    local known = {
      plan = true,
      ask = true,
      auto = true,
      full = true,
      interactive = true,
      risk_based = true,
      allow_all = true,
    }
    for _, m in ipairs(M.modes()) do
      known[m] = true
    end
    if not known[norm] then
      notify(('unknown mode %q: %s'):format(name, table.concat(M.modes(), ', ')), vim.log.levels.ERROR)
      return cb(nil)
    end
    state.mode = norm
    said()
    return cb(norm)
  end
  local cur = M.current().mode
  vim.ui.select(M.modes(), {
    prompt = 'Kgent mode for the next runs',
    kind = 'kgent.mode',
    format_item = function(m)
      return m == cur and (m .. '  (current)') or m
    end,
  }, function(choice)
    vim.schedule(function()
      if choice then
        return M.mode(choice, cb)
      end
      cb(nil)
    end)
  end)
end

--- Set the provider of the next runs (its first known model unless a model is chosen after).
---@param name string?
function M.provider(name, cb)
  cb = cb or function() end
  local function set(p)
    state.provider = p
    local known = (caps() or {}).models
    known = known and known[p] or {}
    state.model = known[1]
    said()
    cb(p)
  end
  if name and name ~= '' then
    return set(name)
  end
  daemon.with_conn(function(conn)
    when_ready(conn, function(err)
      if err then
        notify(rpc.format_error(err), vim.log.levels.ERROR)
        return cb(nil)
      end
      vim.ui.select(
        (caps() or {}).providers or {},
        { prompt = 'Kgent provider for the next runs', kind = 'kgent.provider' },
        function(choice)
          vim.schedule(function()
            if choice then
              return set(choice)
            end
            cb(nil)
          end)
        end
      )
    end)
  end)
end

local TYPE = 'Type a model id…'

--- Set the model of the next runs. `spec`: "model" (of the current provider) or "provider/model" when that
--- provider exists; without it, pick one of the daemon's known models or type any id.
---@param spec string?
function M.model(spec, cb)
  cb = cb or function() end
  local function set(provider, model)
    if provider then
      state.provider = provider
    end
    state.model = model
    said()
    cb({ provider = provider, model = model })
  end
  if spec and spec ~= '' then
    local p, m = spec:match('^([%w_%-]+)/(.+)$')
    local providers = (caps() or {}).providers or {}
    if p and vim.tbl_contains(providers, p) then
      return set(p, m)
    end
    return set(nil, spec)
  end
  daemon.with_conn(function(conn)
    when_ready(conn, function(err)
      if err then
        notify(rpc.format_error(err), vim.log.levels.ERROR)
        return cb(nil)
      end
      local cur = M.current()
      local items = {}
      local models = (caps() or {}).models or {}
      local providers = vim.tbl_keys(models)
      table.sort(providers)
      for _, p in ipairs(providers) do
        for _, m in ipairs(models[p]) do
          items[#items + 1] = { provider = p, model = m }
        end
      end
      items[#items + 1] = { type = true }
      vim.ui.select(items, {
        prompt = 'Kgent model for the next runs',
        kind = 'kgent.model',
        format_item = function(it)
          if it.type then
            return TYPE
          end
          local mark = (it.provider == cur.provider and it.model == cur.model) and '  (current)' or ''
          return ('%s/%s%s'):format(it.provider, it.model, mark)
        end,
      }, function(choice)
        vim.schedule(function()
          if not choice then
            return cb(nil)
          end
          if choice.type then
            return vim.ui.input(
              { prompt = ('Model id (of %s, or provider/model): '):format(cur.provider or '?') },
              function(text)
                if text and vim.trim(text) ~= '' then
                  return M.model(vim.trim(text), cb)
                end
                cb(nil)
              end
            )
          end
          set(choice.provider, choice.model)
        end)
      end)
    end)
  end)
end

local function first_line(s)
  return ((s or ''):match('^[^\n]*'))
end

--- The user messages on the session's active branch (newest first), each {entry, text, index}.
function M.user_messages(s)
  local on_branch = {}
  for _, id in ipairs(s.branch or {}) do
    on_branch[id] = true
  end
  local out = {}
  for _, e in ipairs(s.entries or {}) do
    if on_branch[e.id] and e.type == 'message' and type(e.message) == 'table' and e.message.role == 'user' then
      out[#out + 1] = { entry = e, text = e.message.text or '' }
    end
  end
  for i, u in ipairs(out) do
    u.index = i
  end
  local rev = {}
  for i = #out, 1, -1 do
    rev[#rev + 1] = out[i]
  end
  return rev
end

--- Fork the current session at one of its user messages: the session continues from just before that message
--- (agent/fork at its parent entry), the message goes into the chat to edit and send, and the transcript marks
--- where the new branch starts. `pick(items, cb)` replaces the picker (vim.ui.select).
---@param cb fun(err: table?, result: table?)?
function M.fork(cb)
  cb = cb or function() end
  local sid = state.session_id
  if not sid then
    notify('no session to fork: run or :Kgent resume one first', vim.log.levels.WARN)
    return cb({ message = 'no session' })
  end
  daemon.with_conn(function(conn)
    conn:request('agent/session', { sessionId = sid }, function(err, s)
      if err then
        notify('fork: ' .. rpc.format_error(err), vim.log.levels.ERROR)
        return cb(err)
      end
      local items = M.user_messages(s)
      if #items == 0 then
        notify('the session has no message to fork at', vim.log.levels.WARN)
        return cb({ message = 'no user message' })
      end
      vim.ui.select(items, {
        prompt = 'Fork the session at (the message comes back to edit and send)',
        kind = 'kgent.fork',
        format_item = function(it)
          local when = (it.entry.timestamp or ''):gsub('T', ' '):gsub('%.%d+Z$', 'Z')
          return ('%d. %s  (%s)'):format(it.index, first_line(it.text), when)
        end,
      }, function(choice)
        vim.schedule(function()
          if not choice then
            return cb({ message = 'nothing picked' })
          end
          local parent = choice.entry.parentId
          if not parent then
            notify('that message starts the session: :Kgent new starts over', vim.log.levels.WARN)
            return cb({ message = 'no parent entry' })
          end
          conn:request('agent/fork', { sessionId = sid, entryId = parent }, function(ferr, res)
            if ferr then
              notify('fork: ' .. rpc.format_error(ferr), vim.log.levels.ERROR)
              return cb(ferr)
            end
            transcript.use(sid)
            transcript.append_lines(
              { M.branch_line(('new branch before message %d: %s'):format(choice.index, first_line(choice.text))) },
              'branch'
            )
            local chat = require('kgent.chat')
            chat.open()
            vim.api.nvim_buf_set_lines(chat.state.buf, 0, -1, false, vim.split(choice.text, '\n', { plain = true }))
            notify(('forked session %s before message %d: edit it in the chat and send'):format(sid, choice.index))
            cb(nil, res)
          end)
        end)
      end)
    end)
  end)
end

--- The line marking where a branch starts in a transcript.
function M.branch_line(what)
  return ('─── ⑂ %s ───'):format(what)
end

--- Completion of :Kgent model / mode / provider arguments.
function M.complete(sub, arglead)
  local c = caps() or {}
  local words = {}
  if sub == 'mode' then
    words = M.modes()
  elseif sub == 'provider' then
    words = c.providers or {}
  elseif sub == 'model' then
    for p, ms in pairs(c.models or {}) do
      for _, m in ipairs(ms) do
        words[#words + 1] = m
        words[#words + 1] = p .. '/' .. m
      end
    end
  end
  local out = {}
  for _, w in ipairs(words) do
    if vim.startswith(w, arglead) then
      out[#out + 1] = w
    end
  end
  table.sort(out)
  return out
end

return M
