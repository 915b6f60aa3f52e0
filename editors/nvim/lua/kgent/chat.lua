-- The chat: a prompt buffer (kgent://chat, markdown, multi-line) under the transcript. <CR> in Normal mode and
-- <C-s> in Insert mode send what it holds: a new run of the current session when none is live, else — per
-- setup{ chat = { busy } } — a steering message (the model sees it after its current tool calls) or a follow-up;
-- <C-f> sends the other kind. Follow-ups wait here, listed at the top of the chat (<C-x> or :Kgent queue clear
-- drops them), and each starts the session's next run when the live one ends. Steering goes to the daemon at
-- once; what it still holds is listed too (from its queue_update events) and dropped with the follow-ups. Mentions: `#buffer` (the buffer the chat
-- was opened from), `#file:path` (a file, its loaded buffer if any) and the Visual selection the chat was opened
-- with are sent as resource blocks (in a steering message or follow-up: as text).
local config = require('kgent.config')
local S = require('kgent.state')

local state, notify = S.state, S.notify

local M = {}

local ns = vim.api.nvim_create_namespace('kgent.chat')
local NAME = 'kgent://chat'

---@class kgent.Chat
---@field buf integer?
---@field origin integer?  the buffer #buffer means
---@field selection {buf: integer, line1: integer, line2: integer}?  sent with the next message
---@field queue {text: string, blocks: table[]}[]  follow-ups waiting for the live run to end
---@field steering string[]  steering messages the daemon still holds (its last queue_update)
M.state = { buf = nil, origin = nil, selection = nil, queue = {}, steering = {} }
local C = M.state

local function first_line(s)
  return (s:match('^[^\n]*'))
end

--- Redraw the chat's header: the context to send and the queue.
function M.refresh()
  if not (C.buf and vim.api.nvim_buf_is_valid(C.buf)) then
    return
  end
  vim.api.nvim_buf_clear_namespace(C.buf, ns, 0, -1)
  local virt = {}
  if C.selection then
    local name = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(C.selection.buf), ':~:.')
    virt[#virt + 1] = { { ('context: %s lines %d-%d (sent with the next message)'):format(name ~= '' and name or
      '[No Name]', C.selection.line1, C.selection.line2), 'KgentNote' } }
  end
  for _, s in ipairs(C.steering) do
    virt[#virt + 1] = { { 'steering, waiting for the model: ' .. first_line(s), 'KgentQueue' } }
  end
  for i, q in ipairs(C.queue) do
    virt[#virt + 1] = { { ('follow-up %d, starts when the run ends: %s'):format(i, first_line(q.text)), 'KgentQueue' } }
  end
  if #C.queue > 0 then
    virt[#virt + 1] = { { '<C-x> or :Kgent queue clear drops the follow-ups', 'KgentNote' } }
  end
  if #virt > 0 then
    vim.api.nvim_buf_set_extmark(C.buf, ns, 0, 0, { virt_lines = virt, virt_lines_above = true })
  end
end

local function resource(uri, text, ft)
  local r = { uri = uri, text = text }
  if ft and ft ~= '' then
    r.mimeType = 'text/x-' .. ft
  end
  return { type = 'resource', resource = r }
end

local function buffer_resource(buf)
  local name = vim.api.nvim_buf_get_name(buf)
  local uri = name ~= '' and vim.uri_from_fname(vim.fn.fnamemodify(name, ':p')) or ('untitled:buffer-%d'):format(buf)
  return resource(uri, table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n'), vim.bo[buf].filetype)
end

--- The prompt blocks for `text`: the text, then a resource for each mention and the selection.
---@param text string
---@return table[] blocks, string? err
function M.blocks(text)
  local blocks = { { type = 'text', text = text } }
  if text:find('#buffer', 1, true) then
    if not (C.origin and vim.api.nvim_buf_is_valid(C.origin)) then
      return blocks, '#buffer: the chat was not opened from a buffer'
    end
    blocks[#blocks + 1] = buffer_resource(C.origin)
  end
  for path in text:gmatch('#file:(%S+)') do
    local abs = vim.fn.fnamemodify(path, ':p')
    local buf = vim.fn.bufnr(abs)
    if buf > 0 and vim.api.nvim_buf_is_loaded(buf) then
      blocks[#blocks + 1] = buffer_resource(buf)
    else
      local ok, lines = pcall(vim.fn.readfile, abs)
      if not ok then
        return blocks, ('#file:%s: cannot read %s'):format(path, abs)
      end
      blocks[#blocks + 1] = resource(vim.uri_from_fname(abs), table.concat(lines, '\n'),
        vim.filetype.match({ filename = abs }))
    end
  end
  if C.selection then
    local sel = require('kgent.runs').selection_prompt('', C.selection)
    blocks[#blocks + 1] = sel[2]
  end
  return blocks
end

--- Blocks as one text (steering and follow-ups take text): resources as <resource> elements, as the daemon renders
--- them for the model.
local function as_text(blocks)
  local parts = {}
  for _, b in ipairs(blocks) do
    if b.type == 'text' then
      parts[#parts + 1] = b.text
    else
      parts[#parts + 1] = ('<resource uri="%s">\n%s\n</resource>'):format(b.resource.uri, b.resource.text)
    end
  end
  return table.concat(parts, '\n\n')
end

local function live_run()
  local r = state.run_id and state.runs[state.run_id]
  return r and r.live and r or nil
end

--- Send `text` (default: the chat buffer's lines). `kind`: "run", "steer" or "follow_up"; nil: a run when none is
--- live, else `chat.busy`. Returns what was done.
---@param text string?
---@param kind string?
---@return string?
function M.send(text, kind)
  local buf = C.buf
  if text == nil then
    if not (buf and vim.api.nvim_buf_is_valid(buf)) then
      return nil
    end
    text = vim.trim(table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n'))
  end
  if text == '' then
    notify('the chat is empty: type a message first', vim.log.levels.WARN)
    return nil
  end
  local blocks, err = M.blocks(text)
  if err then
    notify(err, vim.log.levels.ERROR)
    return nil
  end
  local runs = require('kgent.runs')
  local run = live_run()
  kind = kind or (run and config.options.chat.busy or 'run')
  if kind ~= 'run' and not run then
    kind = 'run'
  end
  if kind == 'run' then
    runs.run(#blocks == 1 and text or blocks)
  elseif kind == 'steer' then
    runs.steer(as_text(blocks))
  else
    C.queue[#C.queue + 1] = { text = text, blocks = blocks }
    notify(('follow-up queued (%d waiting): it starts the next run when run %s ends; :Kgent queue clear drops it')
      :format(#C.queue, run.id))
  end
  C.selection = nil
  if buf and vim.api.nvim_buf_is_valid(buf) then
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, {})
    vim.bo[buf].modified = false
  end
  M.refresh()
  return kind
end

--- Drop the queued follow-ups, and what the live run's daemon still holds (agent/clearQueue).
function M.clear_queue()
  local n = #C.queue
  C.queue = {}
  M.refresh()
  local run = live_run()
  if run and #C.steering > 0 then
    require('kgent.daemon').with_conn(function(conn)
      conn:request('agent/clearQueue', { runId = run.id }, function(err)
        notify(err and require('kgent.rpc').format_error(err) or 'dropped the steering messages the run had not read',
          err and vim.log.levels.ERROR or nil)
      end)
    end)
    if n == 0 then
      return
    end
  end
  notify(n == 0 and 'no follow-up is queued' or ('dropped %d queued follow-up%s'):format(n, n == 1 and '' or 's'))
end

--- The live run ended: start the next queued follow-up (in the same session).
function M.on_run_end(data)
  if #C.queue == 0 or live_run() then
    return
  end
  if data and data.sessionId and state.session_id and data.sessionId ~= state.session_id then
    return
  end
  local q = table.remove(C.queue, 1)
  M.refresh()
  notify('starting the queued follow-up: ' .. first_line(q.text))
  require('kgent.runs').run(#q.blocks == 1 and q.text or q.blocks)
end

--- The daemon's queue changed (queue_update of the live run).
function M.on_queue(ev)
  C.steering = ev.steering or {}
  M.refresh()
end

local function setup_buffer(buf)
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'hide'
  vim.bo[buf].swapfile = false
  vim.bo[buf].buflisted = false
  pcall(vim.api.nvim_buf_set_name, buf, NAME)
  vim.bo[buf].filetype = 'markdown'
  local other = config.options.chat.busy == 'steer' and 'follow_up' or 'steer'
  local function map(modes, lhs, fn, desc)
    vim.keymap.set(modes, lhs, fn, { buffer = buf, desc = 'Kgent chat: ' .. desc })
  end
  map('n', '<CR>', function()
    M.send()
  end, 'send (a run, or while one is live: ' .. config.options.chat.busy .. ')')
  map('i', '<C-s>', function()
    M.send()
  end, 'send')
  map({ 'n', 'i' }, '<C-f>', function()
    M.send(nil, other)
  end, 'send as ' .. other:gsub('_', '-'))
  map('n', '<C-x>', M.clear_queue, 'drop the queued follow-ups')
  map('n', 'q', '<cmd>close<cr>', 'close')
end

--- Open the chat under the transcript and move the cursor there. `opts.selection` (a Visual range) goes with the
--- next message.
---@param opts {selection: {buf: integer, line1: integer, line2: integer}?}?
---@return integer  the chat window
function M.open(opts)
  opts = opts or {}
  local cur = vim.api.nvim_get_current_buf()
  if not vim.b[cur].kgent_transcript and cur ~= C.buf then
    C.origin = cur
  end
  if opts.selection then
    C.selection = opts.selection
  end
  if not (C.buf and vim.api.nvim_buf_is_valid(C.buf)) then
    C.buf = vim.api.nvim_create_buf(false, true)
    setup_buffer(C.buf)
  end
  local win = vim.fn.bufwinid(C.buf)
  if win == -1 then
    local ui = require('kgent.ui')
    local tw = ui.open(false)
    if tw and vim.api.nvim_win_get_config(tw).relative == '' then
      vim.api.nvim_set_current_win(tw)
      vim.cmd('belowright split')
    else
      ui.leave_float()
      vim.cmd('botright split')
    end
    win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(win, C.buf)
    vim.api.nvim_win_set_height(win, config.options.chat.height)
    vim.wo[win].winfixheight = true
    vim.wo[win].winbar = '%#KgentHeader#Kgent chat%* <CR>/<C-s> send · <C-f> '
      .. (config.options.chat.busy == 'steer' and 'follow-up' or 'steer') .. ' · #buffer #file:path'
  end
  vim.api.nvim_set_current_win(win)
  M.refresh()
  return win
end

vim.api.nvim_create_autocmd('User', {
  group = vim.api.nvim_create_augroup('kgent.chat', { clear = true }),
  pattern = { 'KgentRunEnd', 'KgentEvent' },
  callback = function(a)
    if a.match == 'KgentRunEnd' then
      C.steering = {}
      vim.schedule(function()
        M.on_run_end(a.data)
      end)
    elseif type(a.data) == 'table' and type(a.data.event) == 'table' and a.data.event.type == 'queue_update' then
      M.on_queue(a.data.event)
    end
  end,
})

return M
