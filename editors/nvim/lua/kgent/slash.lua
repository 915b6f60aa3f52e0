-- Slash commands: `/` at the start of the chat's prompt offers the workspace's commands (the daemon's
-- `agent/commands` menu: built-ins and prompt templates, docs/prompts.md) in the chat's completion menu (its
-- 'omnifunc', kgent.chat); a prompt that starts with one is done by the command's `action` (protocol.md): a
-- `prompt` goes out as agent/run (the daemon expands it), the others are asked of agent/command — `answer` (its text
-- a note in the transcript; its mode or model the next runs'), `newSession` (as :Kgent new), `rewind` (:Kgent rewind).
local config = require('kgent.config')
local rpc = require('kgent.rpc')
local S = require('kgent.state')

local state, notify = S.state, S.notify

local M = {}

local WAIT_MS = 10000 -- the first list may wait for the daemon to start

---@type table<string, table<string, string>>  workspace -> command name -> action, from the last menu listed
local actions = {}

--- The start column for 'omnifunc' when the cursor is on a `/name` at the very start of the prompt, else nil.
---@return integer?
function M.findstart()
  local row, col = unpack(vim.api.nvim_win_get_cursor(0))
  if row ~= 1 then
    return nil
  end
  local line = vim.api.nvim_get_current_line():sub(1, col)
  return line:match('^/[%w_%.%-]*$') and 0 or nil
end

--- The daemon's slash menu for the workspace (waits up to WAIT_MS for the answer, pumping the event loop); nil and
--- why on failure. Each entry's action is kept for M.action.
---@param workspace string?
---@return table[]?, string?
function M.menu(workspace)
  local conn, err = require('kgent.daemon').connection()
  if not conn then
    return nil, err
  end
  workspace = workspace or config.workspace()
  local failure, result = conn:request_sync('agent/commands', { workspace = workspace }, WAIT_MS)
  if failure then
    return nil, rpc.format_error(failure)
  end
  local known = {}
  for _, c in ipairs(result.menu) do
    known[c.name] = c.action
  end
  actions[workspace] = known
  return result.menu
end

--- Completion items for `base` (what is typed so far, `/` included): the menu's entries as the daemon words them.
---@param base string
---@return table[]
function M.items(base)
  local menu, err = M.menu()
  if not menu then
    notify('slash commands: ' .. tostring(err), vim.log.levels.WARN)
    return {}
  end
  local out = {}
  for _, c in ipairs(menu) do
    local word = '/' .. c.name
    if vim.startswith(word, base) then
      out[#out + 1] = {
        word = word .. ' ',
        abbr = word .. (c.argumentHint and (' ' .. c.argumentHint) or ''),
        menu = c.description,
      }
    end
  end
  return out
end

--- The command's name when `text` starts with one as the daemon reads it: `/name`, then whitespace or the end
--- (`//…` and a leading space are escapes, `/usr/bin/x` is a path).
---@param text string
---@return string?
function M.parse(text)
  local name, rest = text:match('^/(%w[%w_%.%-]*)(.*)$')
  if name and (rest == '' or rest:match('^%s')) then
    return name
  end
  return nil
end

--- The action the last menu of `workspace` gave `name` (nil: not listed yet, or not in it).
---@param name string
---@param workspace string?
---@return string?
function M.action(name, workspace)
  return (actions[workspace or config.workspace()] or {})[name]
end

--- Write `text` into transcript `key` as a note and show it; where no window shows it, say it too.
local function show(text, key)
  if text == nil or text == '' then
    return
  end
  local transcript = require('kgent.transcript')
  key = transcript.use(key)
  transcript.note(text)
  require('kgent.ui').show(key)
  if vim.fn.bufwinid(transcript.buf(key)) == -1 then
    notify(text)
  end
end

---@class kgent.SlashTarget
---@field session_id string?  the session the prompt would continue (nil: a new one)
---@field workspace string
---@field new_session boolean?  the prompt was to start a new session (:Kgent new): forget the current one first

--- Do the slash command `text` by its action: ask agent/command, then show its answer (and take its mode or
--- model for the next runs), start a new conversation, or open the rewind flow. A command that turns out to be a
--- prompt is handed to `as_prompt` (to send as agent/run). cb(err, agent/command's answer).
---@param text string
---@param target kgent.SlashTarget
---@param as_prompt fun()
---@param cb fun(err: table?, result: table?)
function M.perform(text, target, as_prompt, cb)
  require('kgent.daemon').with_conn(function(conn)
    local params = { text = text }
    if target.session_id then
      params.sessionId = target.session_id
    else
      params.workspace = target.workspace
    end
    conn:request('agent/command', params, function(err, res)
      if err then
        local data = type(err.data) == 'table' and err.data or {}
        -- A daemon that died is announced once, by its exit (kgent.daemon).
        if data.code ~= 'daemon_exited' then
          notify(rpc.format_error(err), vim.log.levels.ERROR)
        end
        return cb(err)
      end
      if res.action == 'prompt' then
        return as_prompt()
      end
      local runs = require('kgent.runs')
      if target.new_session and res.action ~= 'newSession' then
        runs.new_session()
      end
      if res.action == 'answer' then
        -- As :Kgent mode / :Kgent model choose them: the next runs name them (protocol.md, agent/command).
        state.mode = res.mode or state.mode
        state.model = res.model or state.model
        show(res.text, target.session_id)
      elseif res.action == 'newSession' then
        runs.new_session()
        show(res.text)
      elseif res.action == 'rewind' then
        require('kgent.rewind').rewind()
      else
        notify(('/%s: this plugin does not know the action %q'):format(res.command, tostring(res.action)))
      end
      cb(nil, res)
    end)
  end)
end

return M
