-- Sessions: list the workspace's sessions, resume one (its history shown in the transcript; `:Kgent run` then
-- continues it), or pick one with vim.ui.select.
local config = require('kgent.config')
local rpc = require('kgent.rpc')
local ui = require('kgent.ui')
local render = require('kgent.render')
local daemon = require('kgent.daemon')
local runs = require('kgent.runs')
local S = require('kgent.state')

local state, notify = S.state, S.notify

local M = {}

--- The workspace's sessions, most recent first: cb(err, sessions).
---@param cb fun(err: table?, sessions: table[]?)
---@param workspace string?
function M.sessions(cb, workspace)
  daemon.with_conn(function(conn)
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
  return ('%s  %s  (%d entries)  %s%s'):format(
    s.sessionId or '?',
    when,
    s.entryCount or 0,
    title,
    s.liveRunId and '  [running]' or ''
  )
end

--- Make `session_id` the current session and show its conversation in the transcript.
---@param session_id string
---@param cb fun(err: table?, session: table?)?
function M.resume_session(session_id, cb)
  cb = cb or function() end
  daemon.with_conn(function(conn)
    -- All entries (not branchOnly): the transcript marks where other branches leave this one.
    conn:request('agent/session', { sessionId = session_id }, function(err, s)
      if err then
        notify('resume: ' .. rpc.format_error(err), vim.log.levels.ERROR)
        return cb(err)
      end
      state.session_id = s.sessionId or session_id
      state.session_workspace = s.workspace
      if s.liveRunId then
        state.run_id = s.liveRunId
      end
      render.render_session(s)
      ui.open()
      notify(('resumed session %s; :Kgent run continues it'):format(state.session_id))
      cb(nil, s)
    end)
  end)
end

--- Pick a session of the workspace (vim.ui.select) and resume it — or, with `latest`, its most recent one (the CLI's
--- `kgent run --continue`); then run `prompt` in it if given.
---@param opts {session_id: string?, prompt: string?, latest: boolean?}?
---@param cb fun(err: table?, session: table?)?
function M.resume(opts, cb)
  opts = opts or {}
  cb = cb or function() end
  local function go(id)
    M.resume_session(id, function(err, s)
      if not err and opts.prompt and opts.prompt ~= '' then
        runs.run(opts.prompt, { session_id = id })
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
    if opts.latest then -- agent/sessions lists the most recent first
      return go(sessions[1].sessionId)
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

--- Pick a transcript: this Neovim's sessions (live ones first, marked) and the workspace's past sessions. A
--- session with a transcript is shown (and becomes the current one); a past one is resumed.
---@param cb fun(choice: table?)?
function M.pick_transcript(cb)
  cb = cb or function() end
  local transcript = require('kgent.transcript')
  local items, seen = {}, {}
  for _, t in ipairs(transcript.list()) do
    if not t.key:match('^new%-') and t.buf then
      local live = false
      for _, r in ipairs(t.runs) do
        live = live or (state.runs[r] and state.runs[r].live) or false
      end
      items[#items + 1] =
        { key = t.key, live = live, label = ('%s  %d run%s'):format(t.key, #t.runs, #t.runs == 1 and '' or 's') }
      seen[t.key] = true
    end
  end
  table.sort(items, function(a, b)
    if a.live ~= b.live then
      return a.live
    end
    return a.key < b.key
  end)
  local function pick()
    vim.ui.select(items, {
      prompt = 'Kgent transcripts',
      kind = 'kgent.transcript',
      format_item = function(it)
        return it.label
      end,
    }, function(choice)
      vim.schedule(function()
        if not choice then
          return cb(nil)
        end
        if choice.past then
          M.resume_session(choice.key, function()
            cb(choice)
          end)
        else
          state.session_id = choice.key
          ui.open(true, choice.key)
          cb(choice)
        end
      end)
    end)
  end
  M.sessions(function(err, sessions)
    local info = {}
    for _, s in ipairs(err and {} or sessions or {}) do
      info[s.sessionId] = s
    end
    -- This Neovim's transcripts are labelled as the past ones are (id, time, entries, title), marked open/running.
    for _, it in ipairs(items) do
      local s = info[it.key]
      if s then
        it.label = ('%s %s'):format(
          it.live and '[running]' or '[open]',
          M.format_session(vim.tbl_extend('force', s, { liveRunId = false }))
        )
      else
        it.label = ('%s %s'):format(it.live and '[running]' or '[open]', it.label)
      end
    end
    for _, s in ipairs(err and {} or sessions or {}) do
      if not seen[s.sessionId] then
        items[#items + 1] = { key = s.sessionId, past = true, label = M.format_session(s) }
      end
    end
    if #items == 0 then
      notify('no sessions yet: :Kgent run {prompt} starts one')
      return cb(nil)
    end
    pick()
  end)
end

return M
