-- Previews of a pending call, opened from an approval (inline or picker): the proposed change in a diff tab
-- (current vs proposed content in scratch buffers; nothing is written) or the call's details in a scratch tab.
local M = {}

local diff_seq = 0

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
  local bufs
  if tc.newText ~= nil then
    local cur = scratch(base .. ' (current)', split_text(tc.oldText), ft)
    local new = scratch(base .. ' (proposed)', split_text(tc.newText), ft)
    bufs = { cur, new }
    M.make_editable(prompt, new)
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

--- Approve with changes: the proposed buffer becomes editable when the daemon takes the user's text
--- (kgent.approval.can_answer_text); `:w` or `ga` in it approves once with its lines as the file's new text.
---@param prompt kgent.Prompt
---@param buf integer
function M.make_editable(prompt, buf)
  local A = require('kgent.approval')
  if not A.can_answer_text(prompt) then
    return
  end
  vim.bo[buf].buftype = 'acwrite'
  vim.bo[buf].modifiable = true
  vim.bo[buf].modified = false
  local newline = (prompt.params.toolCall.newText or ''):sub(-1) == '\n'
  local function accept()
    local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
    local text = table.concat(lines, '\n')
    if newline then
      text = text .. '\n' -- the buffer's lines end as the proposal did
    end
    vim.bo[buf].modified = false
    if not A.answer_text(prompt, text) then
      vim.notify('kgent: this approval is no longer waiting', vim.log.levels.WARN)
    end
  end
  vim.api.nvim_create_autocmd('BufWriteCmd', { buffer = buf, callback = accept })
  local key = (require('kgent.config').options.approval_keys or {}).accept_edited
  if key then
    vim.keymap.set('n', key, accept, { buffer = buf, nowait = true, desc = 'Kgent approval: accept my version' })
  end
  vim.b[buf].kgent_accept_edited = true
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
  if type(tc.args) == 'table' and next(tc.args) then
    lines[#lines + 1] = ''
    lines[#lines + 1] = 'Arguments:'
    vim.list_extend(lines, M.args_lines(tc.args, '    '))
  end
  local always = {}
  for _, opt in ipairs(p.options or {}) do
    if type(opt) == 'table' and type(opt.rules) == 'table' and #opt.rules > 0 then
      always[#always + 1] = opt
    end
  end
  if #always > 0 or p.noRule then
    lines[#lines + 1] = ''
    lines[#lines + 1] = 'Always answers:'
    for _, opt in ipairs(always) do
      lines[#lines + 1] = '    ' .. (opt.name or opt.optionId)
      for _, r in ipairs(opt.rules) do
        lines[#lines + 1] = ('        %s   (%s)'):format(r.rule or '?', r.text or '')
      end
    end
    if p.noRule then
      lines[#lines + 1] = '    No rule can be made: ' .. p.noRule
    end
  end
  if not M.has_diff(p) and tc.kind == 'edit' then
    lines[#lines + 1] = ''
    lines[#lines + 1] = 'No diff: the daemon sent no proposed content for this call.'
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
  local buf = scratch(
    ('kgent://%d/%s (details)'):format(diff_seq, (prompt.params.toolCall or {}).name or 'call'),
    M.details_lines(prompt.params),
    nil
  )
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
  for _, b in ipairs(d.bufs) do
    if vim.api.nvim_buf_is_valid(b) then
      vim.bo[b].modified = false -- an edited proposal answered otherwise: nothing to save
    end
  end
  if d.tab and vim.api.nvim_tabpage_is_valid(d.tab) and #vim.api.nvim_list_tabpages() > 1 then
    pcall(vim.cmd, 'tabclose ' .. vim.api.nvim_tabpage_get_number(d.tab))
  end
  for _, b in ipairs(d.bufs) do
    if vim.api.nvim_buf_is_valid(b) then
      pcall(vim.api.nvim_buf_delete, b, { force = true })
    end
  end
end

--- Whether the call carries a proposed change to show as a diff.
---@param p table
---@return boolean
function M.has_diff(p)
  local tc = p.toolCall or {}
  return tc.newText ~= nil or (tc.diff ~= nil and tc.diff ~= '')
end

--- The arguments of a call as "name: value" lines (strings as they are, multi-line ones indented; others as JSON).
---@param args table
---@param indent string
---@return string[]
function M.args_lines(args, indent)
  local keys = vim.tbl_keys(args)
  table.sort(keys)
  local out = {}
  for _, k in ipairs(keys) do
    local v = args[k]
    if type(v) == 'string' and v:find('\n', 1, true) then
      out[#out + 1] = indent .. k .. ':'
      for _, l in ipairs(split_text(v)) do
        out[#out + 1] = indent .. '  ' .. l
      end
    elseif type(v) == 'string' then
      out[#out + 1] = indent .. k .. ': ' .. v
    else
      local ok, j = pcall(vim.json.encode, v)
      out[#out + 1] = indent .. k .. ': ' .. (ok and j or tostring(v))
    end
  end
  return out
end

return M
