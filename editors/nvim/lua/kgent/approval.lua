-- Approvals: one `agent/permission` request at a time through vim.ui.select (so telescope, snacks, dressing or
-- fzf-lua take over when installed), a "Show diff" choice for edits (current vs proposed content in a diff tab of
-- scratch buffers: nothing is written) or a "Show details" choice for other calls, and withdrawal
-- ($/cancelRequest) that closes the prompt.
--
-- Nothing is approved by default: the first item (the one pickers preselect, so <CR> picks it) only previews;
-- closing the picker, an error, or a withdrawal answers {outcome = "cancelled"}, which the daemon treats as a
-- reject.
--
-- Pickers come in two kinds. Asynchronous ones (telescope, snacks, fzf-lua, dressing) return from vim.ui.select at
-- once and call back later: a withdrawal closes the windows they opened. The built-in one blocks inside
-- vim.ui.select (inputlist()) while the event loop keeps running: a withdrawal ends it with <Esc>, and the next
-- prompt waits until it has returned (never a picker nested in a dead one).
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

---@type table<string, kgent.Prompt>
M.pending = {}
---@type kgent.Prompt[]
M.queue = {}
---@type kgent.Prompt?
M.active = nil
--- The prompt whose vim.ui.select call has not returned yet: a blocking picker (the built-in inputlist()) is
--- waiting for a key.
---@type kgent.Prompt?
M.blocking = nil
local show_deferred = false
local diff_seq = 0

--- A listener told about every decision: fun(prompt, result, how) where how is "answered", "dismissed",
--- "withdrawn". Set by kgent.daemon (transcript, User autocmds).
M.on_done = nil

local function split_text(text)
  if text == nil or text == '' then
    return {}
  end
  local lines = vim.split(text, '\n', { plain = true })
  if lines[#lines] == '' then
    table.remove(lines)
  end
  return lines
end
M.split_text = split_text

--- The one-line question put to the user.
---@param p table  agent/permission params
---@return string
function M.prompt_text(p)
  local tc = p.toolCall or {}
  local parts = { 'Kgent: ' .. (tc.title or tc.name or 'tool call') }
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
  return s
end

---@param p table
---@return boolean
function M.has_diff(p)
  local tc = p.toolCall or {}
  return tc.newText ~= nil or (tc.diff ~= nil and tc.diff ~= '')
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
      items[#items + 1] = { action = 'select', option = opt, label = opt.name or opt.optionId }
    end
  end
  return items
end

-- Diff preview --------------------------------------------------------------------------------------------------

local function scratch(name, lines, ft)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].swapfile = false
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
  pcall(vim.api.nvim_buf_set_name, buf, name)
  if ft then
    vim.bo[buf].filetype = ft
  end
  return buf
end

--- Go back to the prompt's preview tab if it is still open; true when it was.
---@param prompt kgent.Prompt
local function show_open_tab(prompt)
  if prompt.diff and prompt.diff.tab and vim.api.nvim_tabpage_is_valid(prompt.diff.tab) then
    vim.api.nvim_set_current_tabpage(prompt.diff.tab)
    return true
  end
  return false
end

--- Open the proposed change in a new tab: current content (left) and proposed content (right) in diff mode, or
--- the unified diff when the daemon gave no full texts. Scratch buffers only: nothing is written.
---@param prompt kgent.Prompt
function M.open_diff(prompt)
  if show_open_tab(prompt) then
    return
  end
  local tc = prompt.params.toolCall or {}
  local path = tc.path or tc.name or 'change'
  diff_seq = diff_seq + 1
  local base = ('kgent://%d/%s'):format(diff_seq, path)
  local ft = vim.filetype.match({ filename = path }) or nil
  require('kgent.ui').leave_float()
  vim.cmd('tab split')
  local tab = vim.api.nvim_get_current_tabpage()
  local bufs = {}
  if tc.newText ~= nil then
    local cur = scratch(base .. ' (current)', split_text(tc.oldText), ft)
    local new = scratch(base .. ' (proposed)', split_text(tc.newText), ft)
    bufs = { cur, new }
    vim.api.nvim_win_set_buf(0, cur)
    vim.cmd('diffthis')
    vim.cmd('rightbelow vsplit')
    vim.api.nvim_win_set_buf(0, new)
    vim.cmd('diffthis')
  else
    local d = scratch(base .. ' (diff)', split_text(tc.diff), 'diff')
    bufs = { d }
    vim.api.nvim_win_set_buf(0, d)
  end
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(tab)) do
    vim.wo[win].foldenable = false
  end
  prompt.diff = { tab = tab, bufs = bufs }
end

--- The lines of the "Show details" preview: what the call is, why it asks, the command and the arguments.
---@param p table  agent/permission params
---@return string[]
function M.details_lines(p)
  local tc = p.toolCall or {}
  local lines = {
    ('Kgent asks to call %s (%s): %s'):format(tc.name or '?', tc.kind or '?', tc.title or ''),
    '',
    'Reason:    ' .. tostring(p.reason or ''),
    ('Risk:      %s · %s · %s'):format(p.risk or '?', p.operation or '?', p.scope or '?'),
  }
  if tc.path then
    lines[#lines + 1] = 'Path:      ' .. tc.path
  end
  if tc.command then
    lines[#lines + 1] = ''
    lines[#lines + 1] = 'Command:'
    for _, l in ipairs(split_text(tc.command)) do
      lines[#lines + 1] = '    ' .. l
    end
  end
  if type(tc.args) == 'table' then
    lines[#lines + 1] = ''
    lines[#lines + 1] = 'Arguments:'
    for _, l in ipairs(vim.split(vim.inspect(tc.args), '\n', { plain = true })) do
      lines[#lines + 1] = '    ' .. l
    end
  end
  return lines
end

--- Open the call's details (command, path, arguments) in a new tab: one scratch buffer, nothing written.
---@param prompt kgent.Prompt
function M.open_details(prompt)
  if show_open_tab(prompt) then
    return
  end
  diff_seq = diff_seq + 1
  local buf = scratch(('kgent://%d/%s (details)'):format(diff_seq, (prompt.params.toolCall or {}).name or 'call'),
    M.details_lines(prompt.params), nil)
  if vim.api.nvim_win_get_config(0).relative ~= '' then
    for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
      if vim.api.nvim_win_get_config(w).relative == '' then
        vim.api.nvim_set_current_win(w)
        break
      end
    end
  end
  vim.cmd('tab split')
  vim.api.nvim_win_set_buf(0, buf)
  vim.wo.wrap = true
  prompt.diff = { tab = vim.api.nvim_get_current_tabpage(), bufs = { buf } }
end

---@param prompt kgent.Prompt
function M.close_diff(prompt)
  local d = prompt.diff
  if not d then
    return
  end
  prompt.diff = nil
  if d.tab and vim.api.nvim_tabpage_is_valid(d.tab) and #vim.api.nvim_list_tabpages() > 1 then
    pcall(vim.cmd, 'tabclose ' .. vim.api.nvim_tabpage_get_number(d.tab))
  end
  for _, b in ipairs(d.bufs) do
    if vim.api.nvim_buf_is_valid(b) then
      pcall(vim.api.nvim_buf_delete, b, { force = true })
    end
  end
end

-- Prompt flow ---------------------------------------------------------------------------------------------------

local show_next

local function finish(prompt, result, how)
  if prompt.done then
    return
  end
  prompt.done = true
  M.pending[prompt.id] = nil
  M.close_diff(prompt)
  for i, q in ipairs(M.queue) do
    if q == prompt then
      table.remove(M.queue, i)
      break
    end
  end
  prompt.respond(result)
  if M.on_done then
    pcall(M.on_done, prompt, result, how)
  end
  if M.active == prompt then
    M.active = nil
    vim.schedule(show_next)
  end
end

local function close_picker(prompt)
  local cur = vim.api.nvim_get_current_win()
  local closed_current = false
  for _, win in ipairs(prompt.wins or {}) do
    if vim.api.nvim_win_is_valid(win) then
      if win == cur then
        closed_current = true
      end
      pcall(vim.api.nvim_win_close, win, true)
    end
  end
  prompt.wins = {}
  if closed_current and vim.fn.mode():sub(1, 1) == 'i' then
    vim.cmd('stopinsert')
  end
end

local function select(prompt)
  local before = {}
  for _, w in ipairs(vim.api.nvim_list_wins()) do
    before[w] = true
  end
  local items = M.items(prompt.params)
  local answered = false
  -- Show what is on screen now (the transcript, a diff tab just opened) before a blocking picker takes over.
  pcall(vim.cmd.redraw)
  local outer = M.blocking
  M.blocking = prompt
  local ok, err = pcall(vim.ui.select, items, {
    prompt = M.prompt_text(prompt.params),
    kind = 'kgent.permission',
    format_item = function(item)
      return item.label
    end,
  }, function(item)
    if answered then
      return
    end
    answered = true
    -- Pickers call back from their own contexts; decide on the main loop.
    vim.schedule(function()
      if prompt.done then
        return -- withdrawn meanwhile: any late answer is ignored
      end
      prompt.wins = {}
      if item == nil then
        finish(prompt, { outcome = 'cancelled' }, 'dismissed')
      elseif item.action == 'diff' or item.action == 'details' then
        if item.action == 'diff' then
          M.open_diff(prompt)
        else
          M.open_details(prompt)
        end
        select(prompt) -- ask again, with the preview on screen
      else
        finish(prompt, { outcome = 'selected', optionId = item.option.optionId }, 'answered')
      end
    end)
  end)
  M.blocking = outer
  if show_deferred and M.blocking == nil then
    show_deferred = false
    vim.schedule(show_next)
  end
  if not ok then
    vim.notify('kgent: vim.ui.select failed: ' .. tostring(err), vim.log.levels.ERROR)
    finish(prompt, { outcome = 'cancelled' }, 'dismissed')
    return
  end
  -- Windows a (floating) picker opened: closed if the daemon withdraws the prompt.
  if not answered then
    local wins = {}
    for _, w in ipairs(vim.api.nvim_list_wins()) do
      if not before[w] then
        wins[#wins + 1] = w
      end
    end
    prompt.wins = wins
  end
end

show_next = function()
  if M.active and not M.active.done then
    return
  end
  if M.blocking then
    -- A blocking picker is still on the stack (withdrawn, ending with <Esc>): ask once it has returned.
    show_deferred = true
    return
  end
  M.active = nil
  local prompt = table.remove(M.queue, 1)
  if not prompt then
    return
  end
  M.active = prompt
  prompt.shown = true
  select(prompt)
end

--- Ask the user about one agent/permission request. `respond` is called exactly once.
---@param params table
---@param respond fun(result: table)
---@param owner any?  the connection asking (see withdraw_all)
function M.ask(params, respond, owner)
  local id = tostring(params.requestId)
  local prompt = { id = id, params = params, respond = respond, done = false, shown = false, wins = {}, owner = owner }
  M.pending[id] = prompt
  table.insert(M.queue, prompt)
  if not M.active then
    show_next()
  end
end

--- The daemon withdrew a request ($/cancelRequest): close its picker and diff, answer nothing (a late answer would
--- be ignored; "cancelled" is harmless and frees the coroutine).
---@param id string
---@return boolean  whether it was pending
function M.withdraw(id)
  local prompt = M.pending[id]
  if not prompt then
    return false
  end
  close_picker(prompt)
  if M.blocking == prompt and not prompt.done then
    -- The picker blocks inside vim.ui.select (the built-in inputlist()): end it as <Esc> would.
    vim.api.nvim_input('<Esc>')
  end
  finish(prompt, { outcome = 'cancelled' }, 'withdrawn')
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
