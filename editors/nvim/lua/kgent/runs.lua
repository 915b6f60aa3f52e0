-- Runs: start one (continuing the current session unless asked not to, a visual range sent as a resource block; a
-- slash command that is no prompt done by its action, kgent.slash), forget the session, cancel, steer and follow up
-- the current run.
local config = require('kgent.config')
local rpc = require('kgent.rpc')
local ui = require('kgent.ui')
local transcript = require('kgent.transcript')
local daemon = require('kgent.daemon')
local S = require('kgent.state')

local state, notify = S.state, S.notify

local M = {}

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

--- The session a run with `opts` continues in workspace `ws` (nil: a new one), and whether the current session was
--- left because the workspace changed.
---@param opts kgent.RunOpts
---@param ws string
---@return string?, boolean?
local function session_for(opts, ws)
  if opts.session_id then
    return opts.session_id
  end
  if opts.new_session or not state.session_id then
    return nil
  end
  if state.session_workspace == nil or state.session_workspace == ws then
    return state.session_id
  end
  return nil, true
end

--- Send the prompt as agent/run (M.run without the slash commands).
---@param prompt string|table[]
---@param opts kgent.RunOpts
---@param cb fun(err: table?, result: {runId: string, sessionId: string}?)
local function start(prompt, opts, cb)
  if type(prompt) == 'string' and opts.selection then
    prompt = M.selection_prompt(prompt, opts.selection)
  end
  return daemon.with_conn(function(conn)
    local ws = opts.workspace or config.workspace()
    local params = { prompt = prompt, workspace = ws }
    local sid, moved = session_for(opts, ws)
    if moved then
      notify(('the workspace changed to %s: starting a new session'):format(ws))
    end
    if sid then
      params.sessionId = sid
      params.parentEntryId = opts.parent_entry_id
      if opts.session_id and not opts.workspace then
        params.workspace = nil -- the session's own
      end
    end
    -- :Kgent mode / provider / model choose these for the runs that follow (over setup{}'s).
    params.mode = opts.mode or state.mode
    params.provider = opts.provider or state.provider
    params.model = opts.model or state.model
    -- The transcript of the session, or a new one named after the session once the daemon names it.
    local key = sid or transcript.claim_new()
    transcript.use(key)
    if config.options.transcript.open_on_run then
      ui.open(nil, key)
    end
    state.starting = (state.starting or 0) + 1
    if not conn.ready then
      transcript.use(key)
      transcript.note('starting the daemon…')
      pcall(vim.cmd.redrawstatus, { bang = true })
    end
    conn:request('agent/run', params, function(err, res)
      state.starting = math.max(0, (state.starting or 1) - 1)
      if err then
        local data = type(err.data) == 'table' and err.data or {}
        local msg = rpc.format_error(err)
        if data.code == 'session_busy' then
          msg = msg .. ' — use :Kgent steer / :Kgent followup, or :Kgent cancel'
        end
        -- A daemon that died is announced once, by its exit (kgent.daemon), not again by each request.
        if data.code ~= 'daemon_exited' then
          notify(msg, vim.log.levels.ERROR)
        end
        transcript.use(key)
        transcript.note('could not start the run: ' .. msg)
        return cb(err)
      end
      transcript.adopt(key, res.sessionId)
      local run = state.runs[res.runId] or { id = res.runId, live = true, conn = conn }
      run.session_id = res.sessionId
      run.key = res.sessionId
      run.workspace = run.workspace or params.workspace or state.session_workspace or ws
      state.runs[res.runId] = run
      if run.live then
        state.run_id = res.runId
      end
      state.session_id = res.sessionId
      state.session_workspace = run.workspace
      cb(nil, res)
    end)
  end)
end

--- Start a run. It continues the current session (the last run's, or the resumed one) unless `new_session`. A
--- prompt that starts with a slash command whose action is not `prompt` (/help, /cost, /mode, /model, /clear,
--- /rewind) is done as that action says instead (kgent.slash): then cb gets agent/command's answer.
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
  local text = prompt
  if type(prompt) == 'table' then
    text = type(prompt[1]) == 'table' and prompt[1].type == 'text' and prompt[1].text or ''
  end
  local slash = require('kgent.slash')
  local name = slash.parse(text)
  local ws = opts.workspace or config.workspace()
  -- A name the last menu did not list may still be a template: agent/command says which.
  if name and slash.action(name, ws) ~= 'prompt' then
    local sid = session_for(opts, ws)
    return slash.perform(text, { session_id = sid, workspace = ws, new_session = opts.new_session }, function()
      start(prompt, opts, cb)
    end, cb)
  end
  return start(prompt, opts, cb)
end

--- Forget the current session: the next run starts a new one.
function M.new_session()
  state.session_id = nil
  state.session_workspace = nil
  transcript.use(transcript.new_key())
  transcript.note('new session: the next run starts a new conversation')
  if config.options.transcript.open_on_run then
    ui.open()
  end
end

local function live_run(run_id)
  local id = run_id or state.run_id
  if not id or not (state.runs[id] and state.runs[id].live) then
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
  daemon.with_conn(function(conn)
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
  daemon.with_conn(function(conn)
    conn:request(method, { runId = id, text = text }, function(err, res)
      if err then
        notify(rpc.format_error(err), vim.log.levels.ERROR)
      else
        notify(
          ('%s queued for run %s: %s'):format(
            method == 'agent/steer' and 'steering message' or 'follow-up',
            id,
            (text:match('^[^\n]*'))
          )
        )
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

return M
