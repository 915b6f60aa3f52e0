-- The transcript buffer (kgent://transcript, markdown): its state, and the primitives that write to it — whole
-- lines, streamed text, notes, one line per tool call (kept by an extmark, rewritten as its status changes) and
-- links to changed files. What each event writes is kgent.render; the window is kgent.ui.
local config = require('kgent.config')

local M = {}

local ns_tools = vim.api.nvim_create_namespace('kgent.transcript.tools')
local ns_files = vim.api.nvim_create_namespace('kgent.transcript.files')

---@class kgent.ToolLine
---@field mark integer  extmark of its line
---@field title string
---@field status string
---@field approval string?
---@field run string  the run id

local T = {
  buf = nil, ---@type integer?
  tail = nil, ---@type string?  what the last line holds: "text" | "thinking" | "block" | nil (empty buffer)
  tools = {}, ---@type table<string, kgent.ToolLine>
  files = {}, ---@type table<integer, string>  changed-file extmark id -> absolute path
}

local NAME = 'kgent://transcript'

M.ICON = { pending = '○', in_progress = '◐', completed = '✓', failed = '✗', cancelled = '✗', unfinished = '✗' }

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
    require('kgent.ui').open_file_under_cursor()
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

--- Reset the transcript state (tests; a wiped buffer resets itself).
function M.reset()
  if T.buf and vim.api.nvim_buf_is_valid(T.buf) then
    pcall(vim.api.nvim_buf_delete, T.buf, { force = true })
  end
  T.buf, T.tail, T.tools, T.files = nil, nil, {}, {}
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

-- Writing ---------------------------------------------------------------------------------------------------------

--- Mark the current paragraph as ended: the next streamed text starts a new one.
function M.end_stream()
  if T.tail == 'text' or T.tail == 'thinking' then
    T.tail = 'ended'
  end
end

--- Append whole lines of `kind`. A blank line separates them from lines of another kind before them.
---@param lines string[]
---@param kind string
---@return integer  the 0-based row of the first appended line
function M.append_lines(lines, kind)
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
---@param text string?
---@param kind "text"|"thinking"
function M.append_stream(text, kind)
  if text == nil or text == '' then
    return
  end
  local prefix = kind == 'thinking' and '> ' or ''
  if T.tail ~= kind then
    M.append_lines({ prefix }, kind)
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
  M.append_lines(vim.tbl_map(function(l)
    return '_' .. l .. '_'
  end, vim.split(text, '\n', { plain = true, trimempty = true })), 'note')
end

-- Tool lines ------------------------------------------------------------------------------------------------------

local function tool_line(t)
  local s = ('- %s %s'):format(M.ICON[t.status] or '·', t.title)
  s = s .. ' · ' .. t.status:gsub('_', ' ')
  if t.approval then
    s = s .. ' · ' .. t.approval
  end
  return s
end

--- Append the line of a new tool call, known as `key` from then on.
---@param key string
---@param t {title: string, status: string, run: string}
function M.add_tool(key, t)
  local row = M.append_lines({ tool_line(t) }, 'tool')
  t.mark = vim.api.nvim_buf_set_extmark(M.buf(), ns_tools, row, 0, {})
  T.tools[key] = t
end

--- The tool line known as `key` (change its fields, then `update_tool(key)`).
---@return kgent.ToolLine?
function M.tool(key)
  return T.tools[key]
end

--- All tool lines by key.
---@return table<string, kgent.ToolLine>
function M.tools()
  return T.tools
end

--- Rewrite the line of tool `key` from its fields.
function M.update_tool(key)
  local t = T.tools[key]
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

--- Insert the first `transcript.tool_output_lines` lines of a tool's output under its line.
function M.tool_output(key, output)
  local t = T.tools[key]
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

-- Changed files ---------------------------------------------------------------------------------------------------

--- Mark the 0-based row `row` as the link to the file `path` (absolute).
function M.add_file(row, path)
  local id = vim.api.nvim_buf_set_extmark(M.buf(), ns_files, row, 0, {})
  T.files[id] = path
end

--- The changed file linked from the 0-based row `row`, if any.
---@return string?
function M.file_at(row)
  local marks = vim.api.nvim_buf_get_extmarks(M.buf(), ns_files, { row, 0 }, { row, -1 }, { details = true })
  local path
  for _, m in ipairs(marks) do
    path = T.files and T.files[m[1]]
  end
  return path
end

return M
