-- :Kgent instructions — the instruction files (AGENTS.md, CLAUDE.md) and skills the current session's context
-- holds (agent/session's `instructions` and `skills`); pick one to open it.
local daemon = require('kgent.daemon')
local rpc = require('kgent.rpc')
local S = require('kgent.state')

local state, notify = S.state, S.notify

local M = {}

local SOURCES = { user = 'yours', project = 'project root', directory = 'directory' }

--- The items to show for an agent/session result: {path, label}, instructions first (general → specific).
---@param s table SessionResult
---@return {path: string, label: string}[]
function M.items(s)
  local out = {}
  for _, f in ipairs(s.instructions or {}) do
    local notes = { SOURCES[f.source] or f.source }
    if f.change == 'changed' then
      notes[#notes + 1] = 're-read'
    end
    if f.truncated then
      notes[#notes + 1] = 'cut at 32 KiB'
    end
    out[#out + 1] = { path = f.path, label = ('%s  (%s)'):format(f.path, table.concat(notes, ', ')) }
  end
  for _, k in ipairs(s.skills or {}) do
    out[#out + 1] = { path = k.path, label = ('skill %s: %s'):format(k.name, k.description) }
  end
  return out
end

--- What the current session loaded: cb(err, items).
---@param cb fun(err: table?, items: table[]?)
function M.list(cb)
  if not state.session_id then
    return cb(nil, {})
  end
  daemon.with_conn(function(conn)
    conn:request('agent/session', { sessionId = state.session_id, branchOnly = true }, function(err, s)
      if err then
        return cb(err)
      end
      cb(nil, M.items(s))
    end)
  end)
end

--- Pick one of the current session's instruction files or skills (vim.ui.select) and open it.
function M.open()
  M.list(function(err, items)
    if err then
      return notify('instructions: ' .. rpc.format_error(err), vim.log.levels.ERROR)
    end
    if #items == 0 then
      return notify('no instructions or skills loaded in this session')
    end
    vim.ui.select(items, {
      prompt = 'Kgent instructions and skills (open one)',
      kind = 'kgent.instructions',
      format_item = function(it)
        return it.label
      end,
    }, function(choice)
      if choice then
        vim.cmd.edit(vim.fn.fnameescape(choice.path))
      end
    end)
  end)
end

return M
