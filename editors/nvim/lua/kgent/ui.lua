-- The transcript's window: opened per `transcript.layout` (vsplit, split, tab, float or none) without taking the
-- cursor unless asked, toggled, and <CR> on a changed file's line opening it. The buffer and what is written to it
-- are kgent.transcript (its buf, lines, note and reset are re-exported here) and kgent.render.
local config = require('kgent.config')
local transcript = require('kgent.transcript')

local M = {}

M.buf = transcript.buf
M.lines = transcript.lines
M.note = transcript.note
M.reset = transcript.reset

M.use = transcript.use

local function dim(size, total)
  if size < 1 then
    return math.max(20, math.floor(total * size))
  end
  return math.floor(size)
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

--- The window of the current tab that shows a transcript (any session's), if any; `buf`'s first.
local function transcript_win(buf)
  local any
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    local b = vim.api.nvim_win_get_buf(w)
    if b == buf then
      return w
    end
    if not any and vim.b[b].kgent_transcript and vim.api.nvim_win_get_config(w).relative == '' then
      any = w
    end
  end
  return any
end

--- Show the transcript of session `key` (default: the current one) per `transcript.layout`: a window of this tab
--- that shows a transcript shows this one (the other sessions' buffers stay as they are).
---@param focus boolean?  move the cursor there (default: transcript.focus)
---@param key string?
---@return integer?  the window
function M.open(focus, key)
  local o = config.options.transcript
  if focus == nil then
    focus = o.focus
  end
  if key then
    transcript.use(key)
  end
  local buf = M.buf()
  local w = transcript_win(buf)
  if w then
    if vim.api.nvim_win_get_buf(w) ~= buf then
      vim.api.nvim_win_set_buf(w, buf)
      pcall(vim.api.nvim_win_set_cursor, w, { vim.api.nvim_buf_line_count(buf), 0 })
    end
    if focus then
      vim.api.nvim_set_current_win(w)
    end
    return w
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
  for opt, val in pairs({
    wrap = true,
    linebreak = true,
    number = false,
    relativenumber = false,
    signcolumn = 'no',
    foldenable = false,
    conceallevel = 2,
  }) do
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

--- Show session `key`'s transcript without taking the cursor, unless `transcript.layout` is "none" or the option
--- `transcript.open_on_run` is off.
function M.show(key)
  if config.options.transcript.open_on_run then
    return M.open(false, key)
  end
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

--- Open the changed file on the cursor's line (in the previous window, or a new split).
function M.open_file_under_cursor()
  local buf = M.buf()
  local path = transcript.file_at(vim.api.nvim_win_get_cursor(0)[1] - 1)
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

return M
