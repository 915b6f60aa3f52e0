-- Approvals: every `agent/permission` request is a kgent.Prompt here until it is answered, dismissed or withdrawn
-- ($/cancelRequest, a daemon that exits). How it is asked depends on setup{ approval }: "inline" (the default,
-- kgent.approval_inline: in the session's transcript, answered with buffer-local keys, several at once, never
-- modal) or "select" (kgent.approval_select: vim.ui.select, one at a time). The previews are kgent.preview.
--
-- Nothing is approved by default: a dismissal, an error or a withdrawal answers {outcome = "cancelled"}, which the
-- daemon treats as a reject.
local config = require('kgent.config')
local preview = require('kgent.preview')

local M = {}

---@class kgent.Prompt
---@field id string  the requestId (= the JSON-RPC id)
---@field params table  agent/permission params
---@field respond fun(result: table)
---@field done boolean
---@field shown boolean
---@field wins integer[]  windows the picker opened (closed on withdrawal)
---@field diff {tab: integer?, bufs: integer[]}?
---@field owner any  the connection that asked
---@field seq integer  arrival order
---@field how "inline"|"select"
---@field inline table?  kgent.approval_inline's state (block, timer)

---@type table<string, kgent.Prompt>
M.pending = {}
---@type kgent.Prompt[]  prompts waiting for the picker (select)
M.queue = {}
---@type kgent.Prompt?  the prompt the picker shows (select)
M.active = nil
--- The prompt whose vim.ui.select call has not returned yet: a blocking picker (the built-in inputlist()) is
--- waiting for a key.
---@type kgent.Prompt?
M.blocking = nil
local seq = 0

--- A listener told about every decision: fun(prompt, result, how) where how is "answered", "dismissed",
--- "withdrawn". Set by kgent.daemon (transcript, User autocmds).
M.on_done = nil

M.split_text = preview.split_text
M.has_diff = preview.has_diff
M.open_diff = preview.open_diff
M.open_details = preview.open_details
M.close_diff = preview.close_diff
M.details_lines = preview.details_lines

--- The one-line question put to the user.
---@param p table  agent/permission params
---@return string
function M.prompt_text(p)
  local tc = p.toolCall or {}
  local who = p.agent and ('Kgent sub-agent "%s": '):format(p.agent) or 'Kgent: '
  local parts = { who .. (tc.title or tc.name or 'tool call') }
  if tc.command and not (tc.title or ''):find(tc.command, 1, true) then
    parts[#parts + 1] = '$ ' .. tc.command
  elseif tc.path and not (tc.title or ''):find(tc.path, 1, true) then
    parts[#parts + 1] = tc.path
  end
  local tags = {}
  for _, k in ipairs({ 'risk', 'operation', 'scope' }) do
    if p[k] then
      tags[#tags + 1] = p[k]
    end
  end
  if #tags > 0 then
    parts[#parts + 1] = '[' .. table.concat(tags, ', ') .. ']'
  end
  local s = table.concat(parts, '  ')
  if p.reason then
    s = s .. ' — ' .. p.reason
  end
  if p.noRule then
    s = s .. ' (no "always" rule: ' .. p.noRule .. ')'
  end
  return s
end

--- What an option's "always" answer covers, in words: its rules' texts with their rule syntax, e.g.
--- "allow `npm test` with any arguments in this project [bash(npm test *)]"; nil for an option without rules.
---@param opt table  a permission option
---@return string?
function M.rule_words(opt)
  if type(opt.rules) ~= 'table' or #opt.rules == 0 then
    return nil
  end
  local parts = {}
  for _, r in ipairs(opt.rules) do
    if type(r) == 'table' then
      local words = r.text or r.rule
      if r.rule and r.text then
        words = ('%s [%s]'):format(r.text, r.rule)
      end
      parts[#parts + 1] = words
    end
  end
  return #parts > 0 and table.concat(parts, '; ') or nil
end

--- Items for vim.ui.select: a preview first ("Show diff" for edits and writes, "Show details" otherwise), so <CR>
--- on the item a picker preselects never approves anything; then the daemon's options in its order.
---@param p table
---@return table[]
function M.items(p)
  local items = {}
  if M.has_diff(p) then
    items[#items + 1] = { action = 'diff', label = 'Show diff' }
  else
    items[#items + 1] = { action = 'details', label = 'Show details' }
  end
  for _, opt in ipairs(p.options or {}) do
    if type(opt) == 'table' and opt.optionId then
      local label = opt.name or opt.optionId
      local words = M.rule_words(opt)
      if words then
        label = label .. ' — ' .. words
      end
      items[#items + 1] = { action = 'select', option = opt, label = label }
    end
  end
  return items
end

--- Open the prompt's preview: the diff when it has one, the details otherwise.
---@param prompt kgent.Prompt
function M.preview(prompt)
  if M.has_diff(prompt.params) then
    preview.open_diff(prompt)
  else
    preview.open_details(prompt)
  end
end

--- Close a prompt: answer the daemon once, close its preview and UI, tell the listener.
---@param prompt kgent.Prompt
---@param result table
---@param how string  "answered" | "dismissed" | "withdrawn"
function M.finish(prompt, result, how)
  if prompt.done then
    return
  end
  prompt.done = true
  M.pending[prompt.id] = nil
  preview.close_diff(prompt)
  for i, q in ipairs(M.queue) do
    if q == prompt then
      table.remove(M.queue, i)
      break
    end
  end
  if prompt.how == 'inline' then
    require('kgent.approval_inline').close(prompt)
  end
  prompt.respond(result)
  if M.on_done then
    pcall(M.on_done, prompt, result, how)
  end
  if M.active == prompt then
    M.active = nil
    vim.schedule(require('kgent.approval_select').show_next)
  end
end

--- The option of `prompt` whose id (else kind) is `which`.
---@return table?
function M.option(prompt, which)
  for _, opt in ipairs(prompt.params.options or {}) do
    if opt.optionId == which then
      return opt
    end
  end
  for _, opt in ipairs(prompt.params.options or {}) do
    if opt.kind == which then
      return opt
    end
  end
end

--- Answer `prompt` with its option of kind (or id) `which`; false if it has no such option.
---@param prompt kgent.Prompt
---@param which string  "allow_once" | "allow_always" | "reject_once" | "reject_always" | an optionId
---@return boolean
function M.answer(prompt, which)
  local opt = M.option(prompt, which)
  if not opt or prompt.done then
    return false
  end
  M.finish(prompt, { outcome = 'selected', optionId = opt.optionId }, 'answered')
  return true
end

--- Whether `prompt` may be answered with the user's own text ("approve with changes"): an edit or write whose
--- proposed text came with the request, an allow option, and a daemon that declared `permissionNewText`.
---@param prompt kgent.Prompt
---@return boolean
function M.can_answer_text(prompt)
  local tc = prompt.params.toolCall or {}
  if tc.newText == nil or M.option(prompt, 'allow_once') == nil then
    return false
  end
  local r = prompt.owner and prompt.owner.init_result
  local caps = r and r.capabilities
  return type(caps) == 'table' and caps.permissionNewText == true
end

--- Approve `prompt` once with the user's version of the file (`text`: the whole file). The same text as the
--- proposal is a plain allow_once; false if the prompt cannot take a text (see can_answer_text) or is answered.
---@param prompt kgent.Prompt
---@param text string
---@return boolean
function M.answer_text(prompt, text)
  if prompt.done or not M.can_answer_text(prompt) then
    return false
  end
  local opt = M.option(prompt, 'allow_once')
  local result = { outcome = 'selected', optionId = opt.optionId }
  if text ~= prompt.params.toolCall.newText then
    result.newText = text
  end
  M.finish(prompt, result, 'answered')
  return true
end

--- The pending prompts in the order they arrived (of the session `session_id` only, if given).
---@param session_id string?
---@return kgent.Prompt[]
function M.list(session_id)
  local out = {}
  for _, p in pairs(M.pending) do
    if session_id == nil or p.params.sessionId == session_id then
      out[#out + 1] = p
    end
  end
  table.sort(out, function(a, b)
    return a.seq < b.seq
  end)
  return out
end

--- Ask the user about one agent/permission request. `respond` is called exactly once.
---@param params table
---@param respond fun(result: table)
---@param owner any?  the connection asking (see withdraw_all)
function M.ask(params, respond, owner)
  local id = tostring(params.requestId)
  seq = seq + 1
  local how = config.options.approval == 'select' and 'select' or 'inline'
  local prompt = {
    id = id,
    params = params,
    respond = respond,
    done = false,
    shown = false,
    wins = {},
    owner = owner,
    seq = seq,
    how = how,
  }
  M.pending[id] = prompt
  if how == 'select' then
    require('kgent.approval_select').enqueue(M, prompt)
  else
    local ok, err = pcall(require('kgent.approval_inline').show, prompt)
    if not ok then
      -- A broken UI must not approve anything: reject.
      vim.notify('kgent: showing the approval failed: ' .. tostring(err), vim.log.levels.ERROR)
      M.finish(prompt, { outcome = 'cancelled' }, 'dismissed')
    end
  end
end

--- The daemon withdrew a request ($/cancelRequest): close its picker or block and diff, answer nothing (a late
--- answer would be ignored; "cancelled" is harmless and frees the coroutine).
---@param id string
---@return boolean  whether it was pending
function M.withdraw(id)
  local prompt = M.pending[id]
  if not prompt then
    return false
  end
  if prompt.how == 'select' then
    require('kgent.approval_select').withdraw(M, prompt)
  end
  M.finish(prompt, { outcome = 'cancelled' }, 'withdrawn')
  return true
end

--- Withdraw every prompt of `owner` (a daemon that exited), or every prompt.
---@param owner any?
function M.withdraw_all(owner)
  for _, id in ipairs(vim.tbl_keys(M.pending)) do
    if owner == nil or M.pending[id].owner == owner then
      M.withdraw(id)
    end
  end
end

return M
