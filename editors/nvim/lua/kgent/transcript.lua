-- The transcript buffers, one per session (kgent://session/<id>, markdown; a run whose session is not known yet
-- writes into kgent://session/new-<n> until the daemon names it): their state, and the primitives that write to the
-- current one (M.use) — whole lines, streamed text, notes, one line per tool call (kept by an extmark, rewritten as
-- its status changes), blocks that can be removed again (approvals) and links to changed files. What each event
-- writes is kgent.render; the window is kgent.ui.
local hl = require('kgent.highlights')

local M = {}

local ns_tools = vim.api.nvim_create_namespace('kgent.transcript.tools')
local ns_files = vim.api.nvim_create_namespace('kgent.transcript.files')
local ns_hl = vim.api.nvim_create_namespace('kgent.transcript.hl')

---@class kgent.ToolLine
---@field mark integer  extmark of its line
---@field title string
---@field status string
---@field approval string?
---@field run string  the run id
---@field path string?  the file it touches
---@field name string?  the tool
---@field live integer?  lines of its live output under its line (kgent.tools)

---@class kgent.Transcript
---@field key string  the session id, or "new-<n>" until it is known
---@field buf integer?
---@field tail string?  what the last line holds: "text" | "thinking" | "block" | nil (empty buffer)
---@field tools table<string, kgent.ToolLine>
---@field files table<integer, string>  changed-file extmark id -> absolute path
---@field runs string[]  run ids written here, in order

---@type table<string, kgent.Transcript>
local all = {}
---@type kgent.Transcript
local T
local new_seq = 0

M.ICON = {
  pending = '○',
  in_progress = '◐',
  completed = '✓',
  failed = '✗',
  cancelled = '✗',
  unfinished = '✗',
  lost = '?',
}

local function name_of(key)
  return 'kgent://session/' .. key
end

-- Buffer ----------------------------------------------------------------------------------------------------------

local function setup_buffer(buf, key)
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'hide'
  vim.bo[buf].swapfile = false
  vim.bo[buf].buflisted = false
  pcall(vim.api.nvim_buf_set_name, buf, name_of(key))
  vim.bo[buf].filetype = 'markdown'
  vim.bo[buf].modifiable = false
  vim.b[buf].kgent_transcript = key
  vim.keymap.set('n', '<CR>', function()
    require('kgent.ui').open_file_under_cursor()
  end, { buffer = buf, desc = 'Kgent: open the changed file on this line' })
  vim.keymap.set('n', 'q', '<cmd>close<cr>', { buffer = buf, desc = 'Kgent: close the transcript' })
  if M.on_buffer then
    M.on_buffer(buf)
  end
end

--- Called with each new transcript buffer (kgent.approval adds its keymaps).
---@type fun(buf: integer)?
M.on_buffer = nil

local function get(key)
  local t = all[key]
  if not t then
    t = { key = key, tools = {}, files = {}, runs = {} }
    all[key] = t
  end
  return t
end

--- Make `key` (a session id, or one from M.new_key) the transcript the writing functions write to.
---@param key string?  nil: keep the current one (or make one for a new session)
---@return string  the key
function M.use(key)
  if key then
    T = get(key)
  elseif not T then
    T = get(M.new_key())
  end
  return T.key
end

--- A key for a run whose session the daemon has not named yet.
---@return string
function M.new_key()
  new_seq = new_seq + 1
  return 'new-' .. new_seq
end

--- A transcript a run may take for a new session: the current one if no run has written or claimed it yet (the one
--- :Kgent new made), else a new one. Claimed for that run.
---@return string
function M.claim_new()
  local t = T
  if not (t and t.key:match('^new%-') and #t.runs == 0 and not t.claimed) then
    t = get(M.new_key())
  end
  t.claimed = true
  return t.key
end

--- The key of the current transcript.
function M.current()
  return M.use()
end

--- The daemon named the session of the transcript `key`: it becomes kgent://session/<session_id>. If that session
--- has a transcript already, `key`'s lines are left behind and its windows show the session's transcript.
---@param key string
---@param session_id string
function M.adopt(key, session_id)
  local t = all[key]
  if key == session_id or not t then
    return
  end
  all[key] = nil
  local target = all[session_id]
  if not target then
    t.key = session_id
    all[session_id] = t
    if t.buf and vim.api.nvim_buf_is_valid(t.buf) then
      pcall(vim.api.nvim_buf_set_name, t.buf, name_of(session_id))
      vim.b[t.buf].kgent_transcript = session_id
    end
  else
    local tb = M.buf(session_id)
    if t.buf and vim.api.nvim_buf_is_valid(t.buf) then
      for _, w in ipairs(vim.api.nvim_list_wins()) do
        if vim.api.nvim_win_get_buf(w) == t.buf then
          vim.api.nvim_win_set_buf(w, tb)
        end
      end
      pcall(vim.api.nvim_buf_delete, t.buf, { force = true })
    end
  end
  if T == t then
    T = all[session_id]
  end
end

--- The buffer of transcript `key` (default: the current one), created on first use and again if it was wiped.
---@param key string?
---@return integer
function M.buf(key)
  local t = key and get(key) or all[M.use()]
  if t.buf and vim.api.nvim_buf_is_valid(t.buf) then
    return t.buf
  end
  local existing = vim.fn.bufnr(name_of(t.key))
  if existing > 0 then
    pcall(vim.api.nvim_buf_delete, existing, { force = true })
  end
  t.buf = vim.api.nvim_create_buf(false, true)
  t.tail, t.tools, t.files = nil, {}, {}
  setup_buffer(t.buf, t.key)
  return t.buf
end

--- The transcripts: {key, buf, runs} of each, sorted by key.
---@return {key: string, buf: integer?, runs: string[]}[]
function M.list()
  local out = {}
  for k, t in pairs(all) do
    out[#out + 1] = { key = k, buf = t.buf and vim.api.nvim_buf_is_valid(t.buf) and t.buf or nil, runs = t.runs }
  end
  table.sort(out, function(a, b)
    return a.key < b.key
  end)
  return out
end

--- Whether `key` has a transcript.
function M.has(key)
  return all[key] ~= nil
end

--- Record that run `run_id` writes into the current transcript.
function M.add_run(run_id)
  if not vim.tbl_contains(T.runs, run_id) then
    T.runs[#T.runs + 1] = run_id
  end
end

--- All lines of transcript `key` (default: the current one).
---@param key string?
---@return string[]
function M.lines(key)
  return vim.api.nvim_buf_get_lines(M.buf(key), 0, -1, false)
end

--- Forget every transcript and wipe their buffers (tests).
function M.reset()
  for _, t in pairs(all) do
    if t.buf and vim.api.nvim_buf_is_valid(t.buf) then
      pcall(vim.api.nvim_buf_delete, t.buf, { force = true })
    end
  end
  all, T = {}, nil
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
  local follow = {}
  for _, w in ipairs(wins_showing(buf)) do
    -- A window whose cursor is on the last line follows the end; one scrolled up (reading) stays where it is.
    follow[w] = vim.api.nvim_win_get_cursor(w)[1] >= before
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
  local n = #lines
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
  hl.mark(M.buf(), ns_hl, row, n, kind)
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
  M.append_lines(
    vim.tbl_map(function(l)
      return '_' .. l .. '_'
    end, vim.split(text, '\n', { plain = true, trimempty = true })),
    'note'
  )
end

-- Tool lines (kgent.tools): one line per tool call, rewritten as its status changes.
for _, name in ipairs({ 'add_tool', 'tool', 'tools', 'update_tool', 'tool_output', 'live_output' }) do
  M[name] = function(...)
    return require('kgent.tools')[name](...)
  end
end

-- Blocks (kgent.blocks): text that can be rewritten or removed later, e.g. a pending approval.
M.add_block = function(...)
  return require('kgent.blocks').add(...)
end
M.block_rows = function(...)
  return require('kgent.blocks').rows(...)
end
M.set_block_line = function(...)
  return require('kgent.blocks').set_line(...)
end
M.remove_block = function(...)
  return require('kgent.blocks').remove(...)
end

--- For kgent.blocks: the current transcript, one by key, the edit wrapper, and a way to switch temporarily.
function M._internals()
  return {
    current = function()
      return T
    end,
    get = function(key)
      return all[key]
    end,
    set_current = function(t)
      T = t
    end,
    edit = edit,
    ns_tools = ns_tools,
    hl = function(buf, row, n, kind)
      hl.mark(buf, ns_hl, row, n, kind)
    end,
  }
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
