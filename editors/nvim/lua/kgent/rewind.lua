-- :Kgent rewind — restore a checkpoint: pick one of the session's messages; the daemon says what rewinding to it
-- would do (agent/rewind with dryRun: files restored, conflicts, and outside git the shell commands whose effects
-- cannot be restored), confirm() shows it, then the files come back (open buffers through this plugin's
-- agent/writeTextFile, not behind them on disk), the session forks before the message and the message goes back
-- into the chat to edit and send.
local rpc = require('kgent.rpc')
local daemon = require('kgent.daemon')
local transcript = require('kgent.transcript')
local S = require('kgent.state')

local state, notify = S.state, S.notify

local M = {}

local VERB = {
  restored = 'restore',
  conflict = 'CONFLICT (left as it is)',
  unchanged = 'unchanged',
  unrestorable = 'CANNOT restore',
}

local function first_line(s)
  return ((s or ''):match('^[^\n]*'))
end

--- The confirmation text of a dry run's answer: the question, each file, each note.
---@param plan table  the agent/rewind result
---@return string
function M.describe(plan)
  local lines = { ('Restore the files to before "%s" and fork the session there?'):format(first_line(plan.prompt)), '' }
  for _, f in ipairs(plan.files or {}) do
    lines[#lines + 1] = ('%s: %s%s'):format(
      VERB[f.outcome] or f.outcome,
      f.path,
      f.reason and (' (' .. f.reason .. ')') or ''
    )
  end
  if #(plan.files or {}) == 0 then
    lines[#lines + 1] = 'No file to restore.'
  end
  for _, n in ipairs(plan.notes or {}) do
    lines[#lines + 1] = ''
    lines[#lines + 1] = 'Not restored: ' .. n
  end
  return table.concat(lines, '\n')
end

--- What a rewind did, in one line.
local function summary(done)
  local restored, conflicts = 0, {}
  for _, f in ipairs(done.files or {}) do
    if f.outcome == 'restored' then
      restored = restored + 1
    elseif f.outcome == 'conflict' then
      conflicts[#conflicts + 1] = f.path
    end
  end
  local s = ('checkpoint restored: %d file(s) restored'):format(restored)
  if #conflicts > 0 then
    s = s .. '; changed since, left as they are: ' .. table.concat(conflicts, ', ')
  end
  return s .. '; edit the message in the chat and send'
end

--- Rewind the current session to one of its user messages (picked with vim.ui.select, newest first).
---@param cb fun(err: table?, result: table?)?
function M.rewind(cb)
  cb = cb or function() end
  local sid = state.session_id
  if not sid then
    notify('no session to rewind: run or :Kgent resume one first', vim.log.levels.WARN)
    return cb({ message = 'no session' })
  end
  local function fail(err)
    notify('rewind: ' .. rpc.format_error(err), vim.log.levels.ERROR)
    cb(err)
  end
  daemon.with_conn(function(conn)
    conn:request('agent/session', { sessionId = sid }, function(err, s)
      if err then
        return fail(err)
      end
      local items = require('kgent.choose').user_messages(s)
      if #items == 0 then
        notify('the session has no message to restore', vim.log.levels.WARN)
        return cb({ message = 'no user message' })
      end
      vim.ui.select(items, {
        prompt = 'Restore the files and the conversation to before',
        kind = 'kgent.rewind',
        format_item = function(it)
          return ('%d. %s'):format(it.index, first_line(it.text))
        end,
      }, function(choice)
        vim.schedule(function()
          if not choice then
            return cb({ message = 'nothing picked' })
          end
          local params = { sessionId = sid, entryId = choice.entry.id }
          conn:request('agent/rewind', vim.tbl_extend('force', params, { dryRun = true }), function(derr, plan)
            if derr then
              return fail(derr)
            end
            vim.schedule(function()
              if vim.fn.confirm(M.describe(plan), '&Restore\n&Cancel', 2, 'Warning') ~= 1 then
                notify('rewind: nothing changed')
                return cb({ message = 'not confirmed' })
              end
              conn:request('agent/rewind', params, function(rerr, done)
                if rerr then
                  return fail(rerr)
                end
                transcript.use(sid)
                transcript.append_lines({
                  require('kgent.choose').branch_line(
                    ('checkpoint restored before message %d: %s'):format(choice.index, first_line(choice.text))
                  ),
                }, 'branch')
                local chat = require('kgent.chat')
                chat.open()
                vim.api.nvim_buf_set_lines(chat.state.buf, 0, -1, false, vim.split(done.prompt, '\n', { plain = true }))
                local conflict = false
                for _, f in ipairs(done.files or {}) do
                  conflict = conflict or f.outcome == 'conflict'
                end
                notify(summary(done), conflict and vim.log.levels.WARN or nil)
                cb(nil, done)
              end)
            end)
          end)
        end)
      end)
    end)
  end)
end

return M
