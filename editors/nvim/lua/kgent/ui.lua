-- The transcript: one markdown buffer (kgent://transcript) that streams every run — the prompt, assistant text,
-- thinking (as a quote), one line per tool call with its status and approval, tool results, and the summary with
-- the changed files (<CR> or gf opens them) and the patch.
local config = require('kgent.config')

local M = {}

local ns_tools = vim.api.nvim_create_namespace('kgent.transcript.tools')
local ns_files = vim.api.nvim_create_namespace('kgent.transcript.files')

local T = {
  buf = nil, ---@type integer?
  tail = nil, ---@type string?  what the last line holds: "text" | "thinking" | "block" | nil (empty buffer)
  tools = {}, ---@type table<string, {mark: integer, title: string, status: string, approval: string?}>
}

local NAME = 'kgent://transcript'

local ICON = { pending = '○', in_progress = '◐', completed = '✓', failed = '✗', cancelled = '✗', unfinished = '✗' }

-- Buffer ----------------------------------------------------------------------------------------------------------

local function setup_buffer(buf)
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'hide'
  vim.bo[buf].swapfile = false
  vim.bo[buf].buflisted = false
  pcall(vim.api.nvim_buf_set_name, buf, NAME)
  vim.bo[buf].filetype = 'markdown'
  vim.bo[buf].modifiable = false
  vim.keymap.set('n', '<CR>', function()
    M.open_file_under_cursor()
  end, { buffer = buf, desc = 'Kgent: open the changed file on this line' })
  vim.keymap.set('n', 'q', '<cmd>close<cr>', { buffer = buf, desc = 'Kgent: close the transcript' })
end

--- The transcript buffer (created on first use, and again if it was wiped).
---@return integer
function M.buf()
  if T.buf and vim.api.nvim_buf_is_valid(T.buf) then
    return T.buf
  end
  local existing = vim.fn.bufnr(NAME)
  if existing > 0 then
    pcall(vim.api.nvim_buf_delete, existing, { force = true })
  end
  T.buf = vim.api.nvim_create_buf(false, true)
  T.tail = nil
  T.tools = {}
  T.files = {}
  setup_buffer(T.buf)
  return T.buf
end

--- All lines of the transcript (for tests and the Lua API).
---@return string[]
function M.lines()
  return vim.api.nvim_buf_get_lines(M.buf(), 0, -1, false)
end

local function wins_showing(buf)
  local out = {}
  for _, w in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(w) == buf then
      out[#out + 1] = w
    end
  end
  return out
end

-- Run `fn` with the buffer modifiable, then keep windows that were at the end following the new end.
local function edit(fn)
  local buf = M.buf()
  local before = vim.api.nvim_buf_line_count(buf)
  local cur = vim.api.nvim_get_current_win()
  local follow = {}
  for _, w in ipairs(wins_showing(buf)) do
    follow[w] = w ~= cur or vim.api.nvim_win_get_cursor(w)[1] >= before
  end
  vim.bo[buf].modifiable = true
  local ok, err = pcall(fn, buf)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
  if not ok then
    vim.notify('kgent: transcript: ' .. tostring(err), vim.log.levels.WARN)
  end
  local last = vim.api.nvim_buf_line_count(buf)
  for w, yes in pairs(follow) do
    if yes and vim.api.nvim_win_is_valid(w) then
      pcall(vim.api.nvim_win_set_cursor, w, { last, 0 })
    end
  end
end

local function is_empty(buf)
  return vim.api.nvim_buf_line_count(buf) == 1 and vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1] == ''
end

--- Append whole lines. A blank line separates them from text/thinking that came before.
---@return integer  the 0-based row of the first appended line
local function append_lines(lines, kind)
  local row
  edit(function(buf)
    if is_empty(buf) then
      vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
      row = 0
    else
      if T.tail ~= kind then
        table.insert(lines, 1, '')
      end
      row = vim.api.nvim_buf_line_count(buf)
      vim.api.nvim_buf_set_lines(buf, -1, -1, false, lines)
      if lines[1] == '' and #lines > 1 then
        row = row + 1
      end
    end
  end)
  T.tail = kind
  return row
end

--- Stream `text` (a delta) into the transcript, continuing the current paragraph of the same kind.
local function append_stream(text, kind)
  if text == nil or text == '' then
    return
  end
  local prefix = kind == 'thinking' and '> ' or ''
  if T.tail ~= kind then
    append_lines({ prefix }, kind)
  end
  edit(function(buf)
    local last = vim.api.nvim_buf_line_count(buf) - 1
    local col = #vim.api.nvim_buf_get_lines(buf, last, last + 1, false)[1]
    local chunks = vim.split(text, '\n', { plain = true })
    for i = 2, #chunks do
      chunks[i] = prefix .. chunks[i]
    end
    vim.api.nvim_buf_set_text(buf, last, col, last, col, chunks)
  end)
  T.tail = kind
end

--- Add a line of information (errors, notes) to the transcript.
---@param text string
function M.note(text)
  append_lines(vim.tbl_map(function(l)
    return '_' .. l .. '_'
  end, vim.split(text, '\n', { plain = true, trimempty = true })), 'note')
end

-- Window ----------------------------------------------------------------------------------------------------------

local function dim(size, total)
  if size < 1 then
    return math.max(20, math.floor(total * size))
  end
  return math.floor(size)
end

--- Show the transcript per `transcript.layout` (no-op if a window of this tab shows it already).
---@param focus boolean?  move the cursor there (default: transcript.focus)
---@return integer?  the window
function M.open(focus)
  local o = config.options.transcript
  if focus == nil then
    focus = o.focus
  end
  local buf = M.buf()
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.api.nvim_win_get_buf(w) == buf then
      if focus then
        vim.api.nvim_set_current_win(w)
      end
      return w
    end
  end
  local layout = o.layout
  if layout == 'none' then
    if focus then
      vim.api.nvim_set_current_buf(buf)
      return vim.api.nvim_get_current_win()
    end
    return nil
  end
  local prev_win = vim.api.nvim_get_current_win()
  local prev_tab = vim.api.nvim_get_current_tabpage()
  local win
  if layout == 'float' then
    local width = dim(o.size < 1 and math.max(o.size, 0.6) or o.size, vim.o.columns)
    local height = math.floor(vim.o.lines * 0.7)
    win = vim.api.nvim_open_win(buf, focus, {
      relative = 'editor',
      width = width,
      height = height,
      row = math.floor((vim.o.lines - height) / 2),
      col = math.floor((vim.o.columns - width) / 2),
      border = 'rounded',
      title = ' Kgent ',
      title_pos = 'center',
    })
  else
    M.leave_float()
    if layout == 'vsplit' then
      vim.cmd('botright vsplit')
      vim.api.nvim_win_set_width(0, dim(o.size, vim.o.columns))
      vim.wo.winfixwidth = true
    elseif layout == 'split' then
      vim.cmd('botright split')
      vim.api.nvim_win_set_height(0, dim(o.size, vim.o.lines))
      vim.wo.winfixheight = true
    else -- tab
      vim.cmd('tab split')
    end
    win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(win, buf)
  end
  for opt, val in pairs({ wrap = true, linebreak = true, number = false, relativenumber = false,
    signcolumn = 'no', foldenable = false, conceallevel = 2 }) do
    vim.wo[win][opt] = val
  end
  pcall(vim.api.nvim_win_set_cursor, win, { vim.api.nvim_buf_line_count(buf), 0 })
  if not focus then
    if vim.api.nvim_tabpage_is_valid(prev_tab) then
      vim.api.nvim_set_current_tabpage(prev_tab)
    end
    if vim.api.nvim_win_is_valid(prev_win) then
      vim.api.nvim_set_current_win(prev_win)
    end
  end
  return win
end

--- Close the transcript windows of the current tab, or open one if there is none.
function M.toggle()
  local buf = M.buf()
  local closed = false
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.api.nvim_win_get_buf(w) == buf and #vim.api.nvim_list_wins() > 1 then
      vim.api.nvim_win_close(w, false)
      closed = true
    end
  end
  if not closed then
    M.open(true)
  end
end

-- Changed files -----------------------------------------------------------------------------------------------------

--- Open the changed file on the cursor's line (in the previous window, or a new split).
function M.open_file_under_cursor()
  local buf = M.buf()
  local row = vim.api.nvim_win_get_cursor(0)[1] - 1
  local marks = vim.api.nvim_buf_get_extmarks(buf, ns_files, { row, 0 }, { row, -1 }, { details = true })
  local path
  for _, m in ipairs(marks) do
    path = T.files and T.files[m[1]]
  end
  if not path then
    vim.notify('kgent: no changed file on this line', vim.log.levels.INFO)
    return
  end
  vim.cmd('wincmd p')
  if vim.api.nvim_get_current_buf() == buf then
    vim.cmd('split')
  end
  vim.cmd.edit(vim.fn.fnameescape(path))
end

-- Events ----------------------------------------------------------------------------------------------------------

local function first_line(s)
  s = s or ''
  return (s:match('^[^\n]*'))
end

local function tool_line(t)
  local s = ('- %s %s'):format(ICON[t.status] or '·', t.title)
  s = s .. ' · ' .. t.status:gsub('_', ' ')
  if t.approval then
    s = s .. ' · ' .. t.approval
  end
  return s
end

-- Tool call ids are unique within a run only (runs may interleave): key the transcript's lines by both.
local function tool_key(run_id, tool_call_id)
  return tostring(run_id or '') .. '\0' .. tostring(tool_call_id or '')
end

--- A floating window (a picker, the transcript) cannot be split: move to a normal window of the tab first.
function M.leave_float()
  if vim.api.nvim_win_get_config(0).relative == '' then
    return
  end
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.api.nvim_win_get_config(w).relative == '' then
      vim.api.nvim_set_current_win(w)
      return
    end
  end
end

local function update_tool(id)
  local t = T.tools[id]
  if not t then
    return
  end
  local buf = M.buf()
  local pos = vim.api.nvim_buf_get_extmark_by_id(buf, ns_tools, t.mark, {})
  if not pos or not pos[1] then
    return
  end
  edit(function(b)
    vim.api.nvim_buf_set_lines(b, pos[1], pos[1] + 1, false, { tool_line(t) })
    vim.api.nvim_buf_set_extmark(b, ns_tools, pos[1], 0, { id = t.mark })
  end)
end

local function tool_output(id, output)
  local t = T.tools[id]
  local n = config.options.transcript.tool_output_lines
  if not t or n <= 0 or output == nil or output == '' then
    return
  end
  local lines = vim.split(output, '\n', { plain = true })
  while #lines > 0 and lines[#lines] == '' do
    table.remove(lines)
  end
  local out = {}
  for i = 1, math.min(n, #lines) do
    out[#out + 1] = '    ' .. lines[i]
  end
  if #lines > n then
    out[#out + 1] = ('    … (%d more lines)'):format(#lines - n)
  end
  local buf = M.buf()
  local pos = vim.api.nvim_buf_get_extmark_by_id(buf, ns_tools, t.mark, {})
  if not pos or not pos[1] then
    return
  end
  edit(function(b)
    vim.api.nvim_buf_set_lines(b, pos[1] + 1, pos[1] + 1, false, out)
  end)
end

local DECISION = {
  allow_once = 'approved once',
  allow_always = 'approved for the session',
  reject_once = 'rejected',
  reject_always = 'rejected always',
}

local function fmt_tokens(u)
  if type(u) ~= 'table' then
    return nil
  end
  return ('%s in / %s out tokens'):format(u.inputTokens or 0, u.outputTokens or 0)
end

---@param run {id: string, session_id: string, workspace: string?}
---@param ev table
function M.on_event(run, ev)
  local ty = ev.type
  local tr = config.options.transcript
  if ty == 'run_start' then
    local head = ('## Run %s · %s/%s · %s'):format(run.id, ev.provider or '?', ev.model or '?', ev.mode or '?')
    local lines = { head, ('_session %s · %s_'):format(ev.sessionId or run.session_id or '?', ev.workspace or '') }
    append_lines(lines, 'header')
  elseif ty == 'user_message' then
    local who = ev.source == 'prompt' and '**You:**' or ('**You (%s):**'):format((ev.source or ''):gsub('_', '-'))
    local text = vim.split(ev.text or '', '\n', { plain = true })
    local max = 20
    local lines = { who .. ' ' .. (text[1] or '') }
    for i = 2, math.min(#text, max) do
      lines[#lines + 1] = text[i]
    end
    if #text > max then
      lines[#lines + 1] = ('… (%d more lines)'):format(#text - max)
    end
    append_lines(lines, 'user')
  elseif ty == 'message_delta' then
    if ev.kind == 'thinking' then
      if tr.show_thinking then
        append_stream(ev.delta, 'thinking')
      end
    else
      append_stream(ev.delta, 'text')
    end
  elseif ty == 'message_end' then
    local m = ev.message or {}
    if m.error then
      M.note('model error: ' .. tostring(type(m.error) == 'table' and (m.error.message or vim.inspect(m.error)) or m.error))
    end
    if T.tail == 'text' or T.tail == 'thinking' then
      T.tail = 'ended'
    end
  elseif ty == 'tool_call' then
    local title = ev.title or ev.name or 'tool'
    if ev.command and not title:find(ev.command, 1, true) then
      title = title .. ': `' .. first_line(ev.command) .. '`'
    end
    local t = { title = title, status = 'pending', run = run.id }
    local row = append_lines({ tool_line(t) }, 'tool')
    t.mark = vim.api.nvim_buf_set_extmark(M.buf(), ns_tools, row, 0, {})
    T.tools[tool_key(run.id, ev.toolCallId)] = t
  elseif ty == 'tool_update' then
    local key = tool_key(run.id, ev.toolCallId)
    local t = T.tools[key]
    if t then
      -- the daemon ends a call that a cancel cut short with {status = "failed", output = "cancelled: ..."}
      local cut_short = ev.status == 'failed' and type(ev.output) == 'string' and vim.startswith(ev.output, 'cancelled:')
      t.status = cut_short and 'cancelled' or ev.status or t.status
      update_tool(key)
      if (ev.status == 'completed' or ev.status == 'failed') and not cut_short then
        tool_output(key, ev.output)
      end
    end
  elseif ty == 'permission_request' then
    local key = tool_key(run.id, (ev.toolCall or {}).toolCallId)
    local t = T.tools[key]
    if t then
      t.approval = 'awaiting approval'
      update_tool(key)
    end
  elseif ty == 'permission_resolved' then
    local key = tool_key(run.id, ev.toolCallId)
    local t = T.tools[key]
    if t then
      local d = DECISION[ev.decision] or (ev.approved and 'approved' or 'rejected')
      if ev.source == 'session_rule' then
        d = (ev.approved and 'approved' or 'rejected') .. ' by a session rule'
      elseif ev.source == 'policy' then
        d = (ev.approved and 'approved' or 'rejected') .. ' by the mode'
      elseif ev.source and ev.source ~= 'host' then
        d = ('%s (%s)'):format(d, (ev.source:gsub('_', ' ')))
      end
      t.approval = d
      update_tool(key)
    end
  elseif ty == 'queue_update' then
    local parts = {}
    for _, s in ipairs(ev.steering or {}) do
      parts[#parts + 1] = 'steer: ' .. first_line(s)
    end
    for _, s in ipairs(ev.followUp or {}) do
      parts[#parts + 1] = 'follow-up: ' .. first_line(s)
    end
    if #parts > 0 then
      M.note('queued — ' .. table.concat(parts, '; '))
    end
  elseif ty == 'retry' then
    M.note(('retrying (%s/%s) in %ss: %s'):format(ev.attempt or '?', ev.maxAttempts or '?', ev.delaySeconds or '?',
      first_line(tostring(ev.error or ''))))
  elseif ty == 'compaction' then
    M.note(('compaction %s (%s)'):format(ev.status or '?', ev.trigger or '?'))
  elseif ty == 'run_end' then
    M.run_end(run, ev)
  end
  -- Other event types (usage, unknown future ones) are not shown.
end

--- An approval prompt closed without a permission_resolved event (yet): show that on its tool line.
---@param params table  the agent/permission params
---@param how string  "answered" | "dismissed" | "withdrawn"
function M.permission_done(params, how)
  local id = tool_key(params.runId, (params.toolCall or {}).toolCallId)
  local t = T.tools[id]
  if t and how == 'withdrawn' and t.approval == 'awaiting approval' then
    t.approval = 'prompt withdrawn'
    update_tool(id)
  end
end

---@param run {id: string, workspace: string?}
---@param ev table  the run_end event
function M.run_end(run, ev)
  -- A call still pending or running gets no final tool_update when the run is cancelled (e.g. while its
  -- approval was open): close its line here.
  for id, t in pairs(T.tools) do
    if t.run == run.id and (t.status == 'pending' or t.status == 'in_progress') then
      t.status = ev.status == 'cancelled' and 'cancelled' or 'unfinished'
      update_tool(id)
    end
  end
  local status = ev.status or '?'
  local head = ('**Run %s** · %s'):format(status, ev.stopReason or '?')
  if ev.turns then
    head = head .. (' · %d turn%s'):format(ev.turns, ev.turns == 1 and '' or 's')
  end
  local tok = fmt_tokens(ev.usage)
  if tok then
    head = head .. ' · ' .. tok
  end
  local lines = { head }
  if type(ev.error) == 'table' then
    lines[#lines + 1] = ('Error (%s): %s'):format(ev.error.code or '?', ev.error.message or '')
  end
  local changed = ev.changedPaths or {}
  local first_file_row
  if #changed > 0 then
    lines[#lines + 1] = ''
    lines[#lines + 1] = 'Changed files (<CR> opens):'
    first_file_row = #lines
    for _, p in ipairs(changed) do
      local abs = p:sub(1, 1) == '/' and p or ((run.workspace or vim.fn.getcwd()) .. '/' .. p)
      lines[#lines + 1] = '- ' .. abs
    end
  end
  if ev.patch and ev.patch ~= '' then
    lines[#lines + 1] = ''
    lines[#lines + 1] = '```diff'
    vim.list_extend(lines, require('kgent.approval').split_text(ev.patch))
    lines[#lines + 1] = '```'
  end
  local row = append_lines(lines, 'summary')
  if first_file_row then
    T.files = T.files or {}
    local buf = M.buf()
    for i, p in ipairs(changed) do
      local abs = p:sub(1, 1) == '/' and p or ((run.workspace or vim.fn.getcwd()) .. '/' .. p)
      local id = vim.api.nvim_buf_set_extmark(buf, ns_files, row + first_file_row + i - 1, 0, {})
      T.files[id] = abs
    end
  end
end

--- Show a resumed session's conversation (agent/session, branch only) in the transcript.
---@param s table  the agent/session result
function M.render_session(s)
  local lines = {}
  lines[#lines + 1] = ('## Resumed session %s · %s'):format(s.sessionId or '?', first_line(s.title or ''))
  lines[#lines + 1] = ('_%s · %d entries_'):format(s.workspace or '', #(s.entries or {}))
  for _, w in ipairs(s.warnings or {}) do
    lines[#lines + 1] = '_warning: ' .. tostring(w) .. '_'
  end
  for _, e in ipairs(s.entries or {}) do
    local m = e.type == 'message' and e.message or nil
    if m and m.role == 'user' then
      lines[#lines + 1] = ''
      lines[#lines + 1] = '**You:** ' .. first_line(m.text)
    elseif m and m.role == 'assistant' and m.text and m.text ~= '' then
      lines[#lines + 1] = ''
      vim.list_extend(lines, vim.split(m.text, '\n', { plain = true }))
    elseif m and m.role == 'tool' then
      lines[#lines + 1] = ('- %s %s'):format(m.isError and ICON.failed or ICON.completed, m.name or 'tool')
    elseif m and m.role == 'summary' then
      lines[#lines + 1] = '_summary: ' .. first_line(m.text) .. '_'
    end
  end
  append_lines(lines, 'history')
end

--- Reset the transcript state (tests; a wiped buffer resets itself).
function M.reset()
  if T.buf and vim.api.nvim_buf_is_valid(T.buf) then
    pcall(vim.api.nvim_buf_delete, T.buf, { force = true })
  end
  T.buf, T.tail, T.tools, T.files = nil, nil, {}, {}
end

return M
