-- Host-owned files (protocol.md § Host-owned files): the daemon's agent/readTextFile, agent/writeTextFile and
-- agent/saveFiles served from loaded buffers. A read returns the buffer's text (unsaved edits included); a write
-- replaces only the lines that differ, as one undoable change, and leaves the buffer modified (never saved); a save
-- writes the buffers the daemon names. A file without a loaded buffer is "not open": the daemon uses the disk.
local M = {}

--- The loaded, normal buffer of `path` (compared by real path: the daemon resolves symlinks), or nil.
---@param path string
---@return integer?
function M.buffer(path)
  local want = vim.uv.fs_realpath(path) or vim.fs.normalize(path)
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) and vim.bo[buf].buftype == '' then
      local name = vim.api.nvim_buf_get_name(buf)
      if name ~= '' and (name == path or (vim.uv.fs_realpath(name) or vim.fs.normalize(name)) == want) then
        return buf
      end
    end
  end
  return nil
end

--- A buffer's text as it would be written (a final newline when 'eol' or 'fixeol' says so).
---@param buf integer
---@return string
function M.text(buf)
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local text = table.concat(lines, '\n')
  if (vim.bo[buf].eol or vim.bo[buf].fixeol) and not (#lines == 1 and lines[1] == '') then
    text = text .. '\n'
  end
  return text
end

--- Put `content` into `buf`: only the lines between the common head and tail change (one undo step; the cursor and
--- marks elsewhere stay).
---@param buf integer
---@param content string
function M.set_text(buf, content)
  local new = vim.split(content, '\n', { plain = true })
  local eol = new[#new] == ''
  if eol and #new > 1 then
    new[#new] = nil
  end
  local old = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local head = 0
  while head < #old and head < #new and old[head + 1] == new[head + 1] do
    head = head + 1
  end
  local tail = 0
  while tail < #old - head and tail < #new - head and old[#old - tail] == new[#new - tail] do
    tail = tail + 1
  end
  local middle = {}
  for i = head + 1, #new - tail do
    middle[#middle + 1] = new[i]
  end
  if head ~= #old or #middle > 0 or tail ~= 0 then
    vim.api.nvim_buf_set_lines(buf, head, #old - tail, false, middle)
  end
  if content ~= '' and vim.bo[buf].eol ~= eol then
    vim.bo[buf].eol = eol
  end
end

--- Save `buf` as the user's :write would (autocommands included); true when it is saved.
---@param buf integer
---@return boolean
function M.save(buf)
  local ok = pcall(vim.api.nvim_buf_call, buf, function()
    vim.cmd('silent keepalt write')
  end)
  return ok and not vim.bo[buf].modified
end

--- A line in the run's transcript naming each buffer saved before a shell command (whatever the buffer held: the
--- user's own unsaved lines too), and those that could not be.
function M.say_saved(params, saved, unsaved)
  if #saved == 0 and #unsaved == 0 then
    return
  end
  local transcript = require('kgent.transcript')
  local ws = params.runId and require('kgent.state').state.runs[params.runId]
  ws = ws and ws.workspace
  local function names(paths)
    return table.concat(
      vim.tbl_map(function(p)
        if ws and vim.startswith(p, ws .. '/') then
          return p:sub(#ws + 2)
        end
        return vim.fn.fnamemodify(p, ':~')
      end, paths),
      ', '
    )
  end
  local prev = transcript.current()
  if params.sessionId then
    transcript.use(params.sessionId)
  end
  local lines = {}
  if #saved > 0 then
    lines[#lines + 1] = ('saved before a command (with any unsaved lines of yours in them): %s'):format(names(saved))
  end
  if #unsaved > 0 then
    lines[#lines + 1] = ('could not save before a command (it sees them as on disk): %s'):format(names(unsaved))
  end
  transcript.end_stream()
  transcript.note(table.concat(lines, '\n'))
  transcript.use(prev)
end

--- Answer one file request of the daemon (a table to send back).
---@param method string
---@param params table
---@return table
function M.serve(method, params)
  if method == 'agent/readTextFile' then
    local buf = M.buffer(params.path)
    return { content = buf and M.text(buf) or vim.NIL }
  elseif method == 'agent/writeTextFile' then
    local buf = M.buffer(params.path)
    if not buf then
      return { applied = false }
    end
    M.set_text(buf, params.content)
    return { applied = true }
  elseif method == 'agent/saveFiles' then
    local saved, unsaved = {}, {}
    for _, path in ipairs(params.paths or {}) do
      local buf = M.buffer(path)
      if buf and M.save(buf) then
        saved[#saved + 1] = path
      else
        unsaved[#unsaved + 1] = path
      end
    end
    M.say_saved(params, saved, unsaved)
    return { saved = saved }
  end
  error('not a file request: ' .. tostring(method))
end

M.METHODS = { ['agent/readTextFile'] = true, ['agent/writeTextFile'] = true, ['agent/saveFiles'] = true }

return M
