-- :Kgent export — the current session as a transcript (agent/exportSession: Markdown, HTML or JSON, redacted by the
-- daemon) in a new buffer of a split, named after the file name the daemon suggests and backed by no file yet:
-- `:w` saves it there (in the current directory), `:w {path}` anywhere.
local rpc = require('kgent.rpc')
local daemon = require('kgent.daemon')
local S = require('kgent.state')

local state, notify = S.state, S.notify

local M = {}

M.FORMATS = { 'md', 'html', 'json' }
local FILETYPE = { md = 'markdown', html = 'html', json = 'json' }

--- A buffer for `filename`: this plugin's earlier, unmodified export under that name (it is refreshed), else a new
--- one, named `filename` or, if a buffer holds that name, `name-2.ext`, `name-3.ext`…
---@param filename string
---@return integer
local function buffer_for(filename)
  local stem, ext = filename:match('^(.*)(%.[^.]*)$')
  stem, ext = stem or filename, ext or ''
  for n = 1, 100 do
    local name = n == 1 and filename or ('%s-%d%s'):format(stem, n, ext)
    local full = vim.fn.fnamemodify(name, ':p')
    local taken
    for _, b in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_get_name(b) == full then
        taken = b
      end
    end
    if taken and vim.b[taken].kgent_export and not vim.bo[taken].modified then
      return taken
    elseif not taken then
      local buf = vim.api.nvim_create_buf(true, false)
      vim.api.nvim_buf_set_name(buf, name)
      vim.b[buf].kgent_export = true
      return buf
    end
  end
  return vim.api.nvim_create_buf(true, false)
end

--- Open the current session's export in `format` ("md" by default, "html", "json") in a split.
---@param format string?
---@param cb fun(err: table?, buf: integer?)?
function M.export(format, cb)
  cb = cb or function() end
  format = (format == nil or format == '') and 'md' or format
  if not FILETYPE[format] then
    notify(('export: the format is md, html or json, not %q'):format(format), vim.log.levels.ERROR)
    return cb({ message = 'unknown format' })
  end
  local sid = state.session_id
  if not sid then
    notify('no session to export: run or :Kgent resume one first', vim.log.levels.WARN)
    return cb({ message = 'no session' })
  end
  daemon.with_conn(function(conn)
    conn:request('agent/exportSession', { sessionId = sid, format = format }, function(err, res)
      if err then
        notify('export: ' .. rpc.format_error(err), vim.log.levels.ERROR)
        return cb(err)
      end
      local buf = buffer_for(vim.fs.basename(res.filename))
      local text = res.text:gsub('\n$', '')
      vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(text, '\n', { plain = true }))
      vim.bo[buf].filetype = FILETYPE[format]
      vim.bo[buf].modified = false
      local win = vim.fn.bufwinid(buf)
      if win == -1 then
        require('kgent.ui').leave_float()
        vim.cmd('belowright split')
        win = vim.api.nvim_get_current_win()
        vim.api.nvim_win_set_buf(win, buf)
      end
      vim.api.nvim_set_current_win(win)
      notify(('session %s exported (%s): :w saves it as %s, :w {path} elsewhere'):format(sid, format, res.filename))
      cb(nil, buf)
    end)
  end)
end

--- Completion of :Kgent export's argument.
function M.complete(arglead)
  return vim.tbl_filter(function(f)
    return vim.startswith(f, arglead)
  end, M.FORMATS)
end

return M
