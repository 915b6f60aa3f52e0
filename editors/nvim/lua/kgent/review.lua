-- :Kgent review — a session's changes hunk by hunk (protocol.md § Review): the pending hunks in the quickfix list,
-- and a diff view per file (left: the file with its pending hunks undone, right: the file itself) whose keys accept
-- (ga) or reject (gr) the hunk under the cursor, ]h / [h move between hunks, gA / gR decide the whole file, q closes.
-- A rejection is reverted by the daemon through the file's buffer (agent/writeTextFile) — saved at once when the
-- buffer had no other unsaved changes — and a hunk whose lines changed since is reported, never overwritten.
local config = require('kgent.config')
local files = require('kgent.files')
local rpc = require('kgent.rpc')
local S = require('kgent.state')

local state, notify = S.state, S.notify

local M = {}

---@class kgent.ReviewView
---@field session_id string
---@field run_id string?
---@field files table[]  {path, absolutePath, hunks} with pending hunks, merged over runs, in path order
---@field index integer  the file shown
---@field tab integer?
---@field file_buf integer?
---@field before_buf integer?
---@field decided {accepted: integer, rejected: integer}

---@type kgent.ReviewView?
M.view = nil

--- Where a hunk's new text is in the file now (1-based), or nil when it is not there any more.
local function start_of(h)
  return type(h.currentStart) == 'number' and h.currentStart or nil
end

local function split_lines(text)
  local out = vim.split(text or '', '\n', { plain = true })
  if out[#out] == '' then
    out[#out] = nil
  end
  return out
end

--- The pending hunks of a review result, per file (merged over runs), and the quickfix items.
---@param result table  an agent/review result
---@return table[] files, table[] qf
function M.pending(result)
  local by_path, order = {}, {}
  for _, run in ipairs(result.runs or {}) do
    for _, f in ipairs(run.files or {}) do
      for _, h in ipairs(f.hunks or {}) do
        if h.status == 'pending' then
          local entry = by_path[f.absolutePath]
          if not entry then
            entry = { path = f.path, absolutePath = f.absolutePath, hunks = {} }
            by_path[f.absolutePath] = entry
            order[#order + 1] = f.absolutePath
          end
          h.runId = run.runId
          entry.hunks[#entry.hunks + 1] = h
        end
      end
    end
  end
  table.sort(order)
  local out, qf = {}, {}
  for _, p in ipairs(order) do
    local f = by_path[p]
    table.sort(f.hunks, function(a, b)
      return (start_of(a) or a.newStart) < (start_of(b) or b.newStart)
    end)
    out[#out + 1] = f
    for _, h in ipairs(f.hunks) do
      local first = split_lines(h.newText)[1]
      local what = first and ('+ ' .. first) or ('- ' .. (split_lines(h.oldText)[1] or ''))
      qf[#qf + 1] = {
        filename = f.absolutePath,
        lnum = start_of(h) or h.newStart,
        text = ('[%s]%s %s'):format(h.id, start_of(h) and '' or ' (changed since: would conflict)', what),
      }
    end
  end
  return out, qf
end

--- The file's lines with its pending hunks undone (where they still are), for the left side of the diff.
---@param lines string[]
---@param hunks table[]
---@return string[]
function M.before_lines(lines, hunks)
  local out = vim.list_extend({}, lines)
  local placed = vim.tbl_filter(start_of, hunks)
  table.sort(placed, function(a, b)
    return start_of(a) > start_of(b)
  end)
  for _, h in ipairs(placed) do
    local first = start_of(h)
    for _ = 1, h.newCount do
      table.remove(out, first)
    end
    for i, l in ipairs(split_lines(h.oldText)) do
      table.insert(out, first + i - 1, l)
    end
  end
  return out
end

local function valid_tab(v)
  return v and v.tab and vim.api.nvim_tabpage_is_valid(v.tab)
end

local function hunk_at(v, line)
  local f = v.files[v.index]
  local best, dist = nil, math.huge
  for _, h in ipairs(f and f.hunks or {}) do
    local s = start_of(h) or h.newStart -- a hunk that moved out of place is still picked (to report its conflict)
    if s then
      local e = s + math.max(h.newCount, 1) - 1
      local d = (line < s and s - line) or (line > e and line - e) or 0
      if d < dist then
        best, dist = h, d
      end
    end
  end
  return best
end

local function file_win(v)
  if not valid_tab(v) then
    return nil
  end
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(v.tab)) do
    if vim.api.nvim_win_get_buf(w) == v.file_buf then
      return w
    end
  end
end

local unmap

--- Close the review's tab and remove its keys from the file buffers.
function M.close()
  local v = M.view
  M.view = nil
  if not v then
    return
  end
  unmap(v)
  if v.before_buf and vim.api.nvim_buf_is_valid(v.before_buf) then
    pcall(vim.api.nvim_buf_delete, v.before_buf, { force = true })
  end
  if valid_tab(v) and #vim.api.nvim_list_tabpages() > 1 then
    pcall(vim.cmd, 'tabclose ' .. vim.api.nvim_tabpage_get_number(v.tab))
  end
end

local function keys()
  return config.options.review.keys
end

local actions = {}

local function map(v, buf)
  v.mapped = v.mapped or {}
  for action, lhs in pairs(keys()) do
    if lhs and actions[action] then
      vim.keymap.set('n', lhs, function()
        actions[action]()
      end, { buffer = buf, nowait = true, desc = 'kgent review: ' .. action })
      v.mapped[#v.mapped + 1] = { buf, lhs }
    end
  end
end

unmap = function(v)
  for _, m in ipairs(v.mapped or {}) do
    if vim.api.nvim_buf_is_valid(m[1]) then
      pcall(vim.keymap.del, 'n', m[2], { buffer = m[1] })
    end
  end
  v.mapped = {}
end

local show

--- Fetch the review again and show the file at `v.index` (or the next with pending hunks); closes when none is left.
local function refresh(v)
  local conn = state.conn
  if not conn then
    return
  end
  conn:request('agent/review', { sessionId = v.session_id, runId = v.run_id }, function(err, result)
    if M.view ~= v then
      return
    end
    v.busy = false
    if err then
      return notify('review: ' .. rpc.format_error(err), vim.log.levels.ERROR)
    end
    local path = v.files[v.index] and v.files[v.index].absolutePath
    local pending, qf = M.pending(result)
    v.files = pending
    if config.options.review.quickfix then
      vim.fn.setqflist({}, 'r', { title = 'Kgent review', items = qf })
    end
    if #pending == 0 then
      notify(('review done: %d accepted, %d rejected'):format(v.decided.accepted, v.decided.rejected))
      M.close()
    else
      v.index = 1
      for i, f in ipairs(pending) do
        if f.absolutePath == path then
          v.index = i
        end
      end
      show(v)
    end
  end)
end

show = function(v)
  local f = v.files[v.index]
  if not valid_tab(v) then
    vim.cmd('tabnew')
    v.tab = vim.api.nvim_get_current_tabpage()
  else
    vim.api.nvim_set_current_tabpage(v.tab)
    vim.cmd('silent! only')
  end
  unmap(v)
  vim.cmd('silent! diffoff!')
  -- The file's own buffer (loaded if it was not): a modified one stays as it is, never re-read.
  v.file_buf = files.buffer(f.absolutePath) or vim.fn.bufadd(f.absolutePath)
  vim.fn.bufload(v.file_buf)
  vim.bo[v.file_buf].buflisted = true
  vim.api.nvim_win_set_buf(0, v.file_buf)
  local right = vim.api.nvim_get_current_win()
  if not (v.before_buf and vim.api.nvim_buf_is_valid(v.before_buf)) then
    v.before_buf = vim.api.nvim_create_buf(false, true)
    vim.bo[v.before_buf].bufhidden = 'hide'
  end
  local before = M.before_lines(vim.api.nvim_buf_get_lines(v.file_buf, 0, -1, false), f.hunks)
  vim.bo[v.before_buf].modifiable = true
  vim.api.nvim_buf_set_lines(v.before_buf, 0, -1, false, before)
  vim.bo[v.before_buf].modifiable = false
  pcall(vim.api.nvim_buf_set_name, v.before_buf, 'kgent://review/before/' .. f.path)
  vim.bo[v.before_buf].filetype = vim.bo[v.file_buf].filetype
  vim.cmd('leftabove vsplit')
  vim.api.nvim_win_set_buf(0, v.before_buf)
  vim.cmd('diffthis')
  vim.api.nvim_set_current_win(right)
  vim.cmd('diffthis')
  map(v, v.file_buf)
  map(v, v.before_buf)
  -- Closing the tab by hand ends the review too (its keys leave the file's buffer).
  vim.api.nvim_create_autocmd('TabClosed', {
    group = vim.api.nvim_create_augroup('kgent-review', { clear = true }),
    callback = vim.schedule_wrap(function() -- during TabClosed the closed tab's handle is still valid
      if M.view == v and not valid_tab(v) then
        M.close()
      end
    end),
  })
  vim.w[right].kgent_review = true
  local first = f.hunks[1] and start_of(f.hunks[1])
  if first then
    local last = vim.api.nvim_buf_line_count(v.file_buf)
    pcall(vim.api.nvim_win_set_cursor, right, { math.min(math.max(first, 1), last), 0 })
  end
end

local function decide(v, accept, reject)
  local conn = state.conn
  if not conn then
    return notify('review: the daemon is not running', vim.log.levels.ERROR)
  end
  local buf = v.file_buf
  local was_modified = buf and vim.bo[buf].modified
  conn:request(
    'agent/applyReview',
    { sessionId = v.session_id, accept = accept, reject = reject },
    function(err, result)
      if err then
        return notify('review: ' .. rpc.format_error(err), vim.log.levels.ERROR)
      end
      local rejected = false
      for _, r in ipairs(result.results or {}) do
        if r.outcome == 'accepted' then
          v.decided.accepted = v.decided.accepted + 1
        elseif r.outcome == 'rejected' then
          v.decided.rejected = v.decided.rejected + 1
          rejected = true
        elseif r.outcome == 'conflict' then
          notify(
            ('hunk %s of %s not rejected: %s'):format(r.hunkId, r.path or '?', r.message or 'conflict'),
            vim.log.levels.WARN
          )
        else
          notify(('hunk %s: %s'):format(r.hunkId, r.outcome), vim.log.levels.WARN)
        end
      end
      -- The revert went into the buffer; a buffer that had no other unsaved change is saved with it.
      if rejected and buf and vim.api.nvim_buf_is_valid(buf) and not was_modified and vim.bo[buf].modified then
        files.save(buf)
      end
      refresh(v)
    end
  )
  v.busy = true
end

local function current(v)
  return hunk_at(v, vim.api.nvim_win_get_cursor(0)[1])
end

function actions.accept()
  local v = M.view
  local h = v and current(v)
  if h then
    decide(v, { h.id }, {})
  end
end

function actions.reject()
  local v = M.view
  local h = v and current(v)
  if h then
    decide(v, {}, { h.id })
  end
end

local function all_ids(v)
  return vim.tbl_map(function(h)
    return h.id
  end, v.files[v.index].hunks)
end

function actions.accept_file()
  local v = M.view
  if v then
    decide(v, all_ids(v), {})
  end
end

function actions.reject_file()
  local v = M.view
  if v then
    decide(v, {}, all_ids(v))
  end
end

local function move(step)
  local v = M.view
  local win = v and file_win(v)
  if not win then
    return
  end
  local line = vim.api.nvim_win_get_cursor(win)[1]
  local starts = {}
  for _, h in ipairs(v.files[v.index].hunks) do
    if start_of(h) then
      starts[#starts + 1] = start_of(h)
    end
  end
  local target
  if step > 0 then
    for _, s in ipairs(starts) do
      if s > line then
        target = s
        break
      end
    end
  else
    for i = #starts, 1, -1 do
      if starts[i] < line then
        target = starts[i]
        break
      end
    end
  end
  if target then
    vim.api.nvim_set_current_win(win)
    vim.api.nvim_win_set_cursor(win, { math.min(target, vim.api.nvim_buf_line_count(v.file_buf)), 0 })
  end
end

function actions.next()
  move(1)
end

function actions.prev()
  move(-1)
end

function actions.close()
  M.close()
end

--- :Kgent review [runId]: the current session's pending hunks (or one run's), in the quickfix list and a diff view.
---@param run_id string?
function M.open(run_id)
  local session_id = state.session_id
  if run_id and run_id ~= '' then
    session_id = (state.runs[run_id] or {}).session_id or session_id
  else
    run_id = nil
  end
  if not session_id then
    return notify('review: no session yet (start a run, or :Kgent resume one)', vim.log.levels.WARN)
  end
  require('kgent.daemon').with_conn(function(conn)
    if M.view then
      M.close()
    end
    local v =
      { session_id = session_id, run_id = run_id, files = {}, index = 1, decided = { accepted = 0, rejected = 0 } }
    conn:request('agent/review', { sessionId = session_id, runId = run_id }, function(err, result)
      if err then
        return notify('review: ' .. rpc.format_error(err), vim.log.levels.ERROR)
      end
      local pending, qf = M.pending(result)
      if config.options.review.quickfix then
        vim.fn.setqflist({}, ' ', { title = 'Kgent review', items = qf })
      end
      if #pending == 0 then
        return notify('review: nothing to review in this session')
      end
      v.files = pending
      M.view = v
      show(v)
      local k = keys()
      notify(
        ('review: %d hunk%s in %d file%s · %s accept, %s reject, %s/%s move, %s close'):format(
          #qf,
          #qf == 1 and '' or 's',
          #pending,
          #pending == 1 and '' or 's',
          k.accept or '-',
          k.reject or '-',
          k.next or '-',
          k.prev or '-',
          k.close or '-'
        )
      )
    end)
  end)
end

--- Whether a decision is on its way (the view is shown again when it is done).
function M.busy()
  return M.view ~= nil and M.view.busy == true
end

return M
