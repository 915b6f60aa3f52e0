-- The chat: a prompt buffer (kgent://chat, markdown, multi-line) under the transcript. <CR> in Normal mode and
-- <C-s> in Insert mode send what it holds: a new run of the current session when none is live, else — per
-- setup{ chat = { busy } } — a steering message (the model sees it after its current tool calls) or a follow-up;
-- <C-f> sends the other kind. Both go to the daemon at once (agent/steer, agent/followUp: the queue is the
-- server's, as in every front); what it still holds is listed at the top of the chat from its queue_update events,
-- and <C-x> or :Kgent queue clear drops it (agent/clearQueue). A follow-up is delivered when the run would otherwise
-- settle, and the run goes on. Mentions: `#buffer` (the buffer the chat
-- was opened from), `#file:path` (a file, its loaded buffer if any) and the Visual selection the chat was opened
-- with are sent as resource blocks (in a steering message or follow-up: as text), and so are `#diagnostics` (the
-- origin buffer's diagnostics), `#viewport` (the lines its window shows) and `#symbol` (the LSP document symbol, or
-- else the tree-sitter node, around its cursor). Typing `#` offers them in a completion menu (also <C-x><C-o>).
-- A run that ends (cancelled, failed) with follow-ups it never read puts them back into the chat, unsent.
local config = require('kgent.config')
local S = require('kgent.state')

local state, notify = S.state, S.notify

local M = {}

local ns = vim.api.nvim_create_namespace('kgent.chat')
local NAME = 'kgent://chat'

---@class kgent.Chat
---@field buf integer?
---@field origin integer?  the buffer #buffer means
---@field origin_win integer?  the window it was in (#viewport, #symbol)
---@field selection {buf: integer, line1: integer, line2: integer}?  sent with the next message
---@field followups string[]  follow-ups the daemon still holds (its last queue_update)
---@field steering string[]  steering messages the daemon still holds (its last queue_update)
M.state = { buf = nil, origin = nil, origin_win = nil, selection = nil, followups = {}, steering = {} }
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
    virt[#virt + 1] = {
      {
        ('context: %s lines %d-%d (sent with the next message)'):format(
          name ~= '' and name or '[No Name]',
          C.selection.line1,
          C.selection.line2
        ),
        'KgentNote',
      },
    }
  end
  for _, s in ipairs(C.steering) do
    virt[#virt + 1] = { { 'steering, waiting for the model: ' .. first_line(s), 'KgentQueue' } }
  end
  for i, f in ipairs(C.followups) do
    virt[#virt + 1] = { { ('follow-up %d, when the run would end: %s'):format(i, first_line(f)), 'KgentQueue' } }
  end
  if #C.followups + #C.steering > 0 then
    virt[#virt + 1] = { { '<C-x> or :Kgent queue clear drops what is queued', 'KgentNote' } }
  end
  if #virt > 0 then
    vim.api.nvim_buf_set_extmark(C.buf, ns, 0, 0, { virt_lines = virt, virt_lines_above = true })
  end
  M.show_header(#virt)
end

--- Virtual lines above line 1 show only while the window's 'topfill' makes room for them (Neovim does not scroll
--- them into view by itself): make each window on the chat show all `n` of them.
---@param n integer?
function M.show_header(n)
  if not (C.buf and vim.api.nvim_buf_is_valid(C.buf)) then
    return
  end
  if n == nil then
    n = 0
    for _, m in ipairs(vim.api.nvim_buf_get_extmarks(C.buf, ns, 0, 0, { details = true })) do
      n = n + #(m[4].virt_lines or {})
    end
  end
  for _, w in ipairs(vim.fn.win_findbuf(C.buf)) do
    vim.api.nvim_win_call(w, function()
      local v = vim.fn.winsaveview()
      if v.topline == 1 and v.topfill ~= n then
        vim.fn.winrestview({ topline = 1, topfill = n })
      end
    end)
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

--- The window showing the origin buffer (the one the chat was opened from, else any).
local function origin_win()
  if not (C.origin and vim.api.nvim_buf_is_valid(C.origin)) then
    return nil
  end
  if
    C.origin_win
    and vim.api.nvim_win_is_valid(C.origin_win)
    and vim.api.nvim_win_get_buf(C.origin_win) == C.origin
  then
    return C.origin_win
  end
  return vim.fn.win_findbuf(C.origin)[1]
end

local function buf_uri(buf)
  local name = vim.api.nvim_buf_get_name(buf)
  return name ~= '' and vim.uri_from_fname(vim.fn.fnamemodify(name, ':p')) or ('untitled:buffer-%d'):format(buf)
end

local SEVERITY = { 'error', 'warning', 'info', 'hint' }

--- #diagnostics: the origin buffer's diagnostics, one per line ("12:5 error [source] message").
local function diagnostics_resource()
  local buf = C.origin
  local lines = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    local src = d.source and (' [' .. d.source .. ']') or ''
    lines[#lines + 1] = ('%d:%d %s%s %s'):format(
      d.lnum + 1,
      d.col + 1,
      SEVERITY[d.severity] or '?',
      src,
      (d.message or ''):gsub('\n', ' ')
    )
  end
  if #lines == 0 then
    lines[1] = '(no diagnostics)'
  end
  return resource(buf_uri(buf) .. '#diagnostics', table.concat(lines, '\n'))
end

--- #viewport: the lines of the origin buffer its window shows.
local function viewport_resource()
  local win = origin_win()
  if not win then
    return nil, '#viewport: the buffer the chat was opened from is in no window'
  end
  local top, bot = vim.fn.line('w0', win), vim.fn.line('w$', win)
  local buf = C.origin
  return resource(
    ('%s#L%d-L%d'):format(buf_uri(buf), top, bot),
    table.concat(vim.api.nvim_buf_get_lines(buf, top - 1, bot, false), '\n'),
    vim.bo[buf].filetype
  )
end

-- The innermost LSP document symbol containing `pos` (0-based {line, character}).
local function innermost(symbols, pos, best)
  for _, s in ipairs(symbols or {}) do
    local r = s.range or (s.location and s.location.range)
    if r then
      local after_start = pos[1] > r.start.line or (pos[1] == r.start.line and pos[2] >= r.start.character)
      local before_end = pos[1] < r['end'].line or (pos[1] == r['end'].line and pos[2] <= r['end'].character)
      if after_start and before_end then
        best = { name = s.name, line1 = r.start.line + 1, line2 = r['end'].line + 1 }
        best = innermost(s.children, pos, best)
      end
    end
  end
  return best
end

local SYMBOL_NODES = { 'function', 'method', 'class', 'struct', 'impl', 'module', 'interface', 'enum', 'trait' }

--- The symbol around the cursor of `win`: from an attached LSP server (textDocument/documentSymbol), else from the
--- buffer's tree-sitter tree (the innermost function/class/… node). Returns {name, line1, line2} or nil, why.
function M.symbol_at(buf, win)
  local cur = vim.api.nvim_win_get_cursor(win)
  local pos = { cur[1] - 1, cur[2] }
  local clients = vim.lsp.get_clients({ bufnr = buf, method = 'textDocument/documentSymbol' })
  if #clients > 0 then
    local res = vim.lsp.buf_request_sync(
      buf,
      'textDocument/documentSymbol',
      { textDocument = vim.lsp.util.make_text_document_params(buf) },
      2000
    )
    for _, r in pairs(res or {}) do
      local best = r.result and innermost(r.result, pos)
      if best then
        return best
      end
    end
  end
  local has_parser, parser = pcall(vim.treesitter.get_parser, buf)
  if has_parser and parser then
    parser:parse() -- get_node looks at the trees parsed so far
  end
  local ok, node = pcall(vim.treesitter.get_node, { bufnr = buf, pos = pos, ignore_injections = false })
  if not ok or not node then
    return nil, 'no LSP server gives document symbols and no tree-sitter parser knows this buffer'
  end
  while node do
    local ty = node:type()
    for _, k in ipairs(SYMBOL_NODES) do
      if ty:find(k, 1, true) then
        local sr, _, er = node:range()
        local name_node = node:field('name')[1]
        local name = name_node and vim.treesitter.get_node_text(name_node, buf) or ty
        return { name = name, line1 = sr + 1, line2 = er + 1 }
      end
    end
    node = node:parent()
  end
  return nil, 'the cursor is in no function, class or other symbol'
end

--- #symbol: the lines of the symbol around the origin window's cursor.
local function symbol_resource()
  local win = origin_win()
  if not win then
    return nil, '#symbol: the buffer the chat was opened from is in no window'
  end
  local sym, why = M.symbol_at(C.origin, win)
  if not sym then
    return nil, '#symbol: ' .. why
  end
  local buf = C.origin
  return resource(
    ('%s#L%d-L%d'):format(buf_uri(buf), sym.line1, sym.line2),
    table.concat(vim.api.nvim_buf_get_lines(buf, sym.line1 - 1, sym.line2, false), '\n'),
    vim.bo[buf].filetype
  )
end

local VARIABLES = {
  { word = '#buffer', menu = 'the buffer the chat was opened from' },
  { word = '#file:', menu = 'a file (its buffer if loaded)' },
  { word = '#image:', menu = 'an image file (PNG, JPEG, WebP, GIF)' },
  { word = '#diagnostics', menu = "the buffer's diagnostics" },
  { word = '#viewport', menu = 'the lines its window shows' },
  { word = '#symbol', menu = 'the function/class around its cursor' },
}
M.VARIABLES = VARIABLES

--- The chat's 'omnifunc': the context variables after a `#`, file names after `#file:`.
function M.omnifunc(findstart, base)
  local slash = require('kgent.slash') -- `/name` at the start of the prompt: the slash commands
  if findstart == 1 and slash.findstart() then
    return slash.findstart()
  elseif findstart == 0 and base:sub(1, 1) == '/' then
    return slash.items(base)
  end
  if findstart == 1 then
    local line = vim.api.nvim_get_current_line():sub(1, vim.api.nvim_win_get_cursor(0)[2])
    local start = line:find('#[%w_:%./%-]*$')
    return start and start - 1 or -3
  end
  local out = {}
  local kind, path = base:match('^#(%a+):(.*)$')
  if path and (kind == 'file' or kind == 'image') then
    for _, f in ipairs(vim.fn.getcompletion(path, 'file')) do
      out[#out + 1] = { word = '#' .. kind .. ':' .. f, menu = kind }
    end
    return out
  end
  for _, v in ipairs(VARIABLES) do
    if vim.startswith(v.word, base) then
      out[#out + 1] = { word = v.word, menu = v.menu }
    end
  end
  return out
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
  local function need_origin(word)
    if not (C.origin and vim.api.nvim_buf_is_valid(C.origin)) then
      return word .. ': the chat was not opened from a buffer'
    end
  end
  for _, v in ipairs({
    { '#diagnostics', diagnostics_resource },
    { '#viewport', viewport_resource },
    { '#symbol', symbol_resource },
  }) do
    if text:find(v[1] .. '%f[^%w_]') then
      local err = need_origin(v[1])
      if err then
        return blocks, err
      end
      local r, why = v[2]()
      if not r then
        return blocks, why
      end
      blocks[#blocks + 1] = r
    end
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
      blocks[#blocks + 1] =
        resource(vim.uri_from_fname(abs), table.concat(lines, '\n'), vim.filetype.match({ filename = abs }))
    end
  end
  if C.selection then
    local sel = require('kgent.runs').selection_prompt('', C.selection)
    blocks[#blocks + 1] = sel[2]
  end
  local images, err = require('kgent.images').blocks(text)
  vim.list_extend(blocks, images)
  return blocks, err
end

--- Blocks as one text (steering and follow-ups take text): resources as <resource> elements, as the daemon renders
--- them for the model.
local function as_text(blocks)
  local parts = {}
  for _, b in ipairs(blocks) do
    if b.type == 'text' then
      parts[#parts + 1] = b.text
    elseif b.type ~= 'image' then -- steering takes text only
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
--- live, else `chat.busy` (a slash command that is no prompt is done at once: kgent.runs). Returns what was done.
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
  if kind == nil and run then
    -- /help, /cost, /mode… (as the last menu listed them) are done now, not sent to the live run's model.
    local slash = require('kgent.slash')
    local name = slash.parse(text)
    local action = name and slash.action(name)
    if action and action ~= 'prompt' then
      kind = 'run'
    end
  end
  kind = kind or (run and config.options.chat.busy or 'run')
  if kind ~= 'run' and not run then
    kind = 'run'
  end
  if kind == 'run' then
    runs.run(#blocks == 1 and text or blocks)
  elseif kind == 'steer' then
    runs.steer(as_text(blocks))
  else
    runs.follow_up(as_text(blocks))
  end
  C.selection = nil
  if buf and vim.api.nvim_buf_is_valid(buf) then
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, {})
    vim.bo[buf].modified = false
  end
  M.refresh()
  return kind
end

--- Drop what the live run's daemon still holds: its steering messages and follow-ups (agent/clearQueue).
function M.clear_queue()
  local n = #C.followups + #C.steering
  local run = live_run()
  if n == 0 or not run then
    notify('no follow-up is queued')
    return
  end
  require('kgent.daemon').with_conn(function(conn)
    conn:request('agent/clearQueue', { runId = run.id }, function(err)
      notify(
        err and require('kgent.rpc').format_error(err)
          or ('dropped %d queued message%s the run had not read'):format(n, n == 1 and '' or 's'),
        err and vim.log.levels.ERROR or nil
      )
    end)
  end)
end

--- The run ended with follow-ups it never read (cancelled, failed): put them back into the chat, unsent (after what
--- it holds). Returns how many.
function M.unqueue(data)
  local texts, n = {}, #C.followups
  C.followups, C.steering = {}, {}
  M.refresh()
  if n == 0 then
    return 0
  end
  for _, f in ipairs(data and data.followups or {}) do
    vim.list_extend(texts, vim.split(f, '\n', { plain = true }))
    texts[#texts + 1] = ''
  end
  texts[#texts] = nil
  if C.buf and vim.api.nvim_buf_is_valid(C.buf) then
    local cur = vim.api.nvim_buf_get_lines(C.buf, 0, -1, false)
    if #cur == 1 and cur[1] == '' then
      vim.api.nvim_buf_set_lines(C.buf, 0, -1, false, texts)
    else
      vim.api.nvim_buf_set_lines(C.buf, -1, -1, false, vim.list_extend({ '' }, texts))
    end
  end
  local why = data and data.status or 'ended'
  notify(('the run was %s: %d queued follow-up%s back in the chat, not sent'):format(why, n, n == 1 and '' or 's'))
  return n
end

--- The live run ended: what the daemon still held for it goes with it; follow-ups it never read come back.
function M.on_run_end(data)
  if data and data.sessionId and state.session_id and data.sessionId ~= state.session_id then
    return
  end
  local status = data and type(data.event) == 'table' and data.event.status or nil
  M.unqueue({ followups = C.followups, status = status })
end

--- The daemon's queue changed (queue_update of the live run).
function M.on_queue(ev)
  C.steering = ev.steering or {}
  C.followups = ev.followUp or {}
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
  map('n', '<C-x>', M.clear_queue, 'drop the queued steering and follow-ups')
  map('n', 'q', '<cmd>close<cr>', 'close')
  vim.bo[buf].omnifunc = "v:lua.require'kgent.chat'.omnifunc"
  -- The menus `#` and `/` open as one types must never insert an entry unasked (with the default 'completeopt'
  -- `#diagnostics` became `#bufferdiagnostics`): a buffer-local 'completeopt' (global-local since Neovim 0.11)
  -- that selects nothing until <C-n>/<C-p> do. On 0.10 ('completeopt' is global only) they open on <C-x><C-o>.
  local auto_menu = vim.fn.has('nvim-0.11') == 1
  if auto_menu then
    local keep = vim.tbl_filter(function(o) -- the rest of the user's ('popup', 'fuzzy'…)
      return not vim.tbl_contains({ 'menu', 'menuone', 'longest', 'noinsert', 'noselect' }, o)
    end, vim.split(vim.go.completeopt, ',', { trimempty = true }))
    vim.bo[buf].completeopt = table.concat(vim.list_extend({ 'menuone', 'noselect' }, keep), ',')
  end
  -- `#` at the start of a word opens the menu of context variables.
  vim.keymap.set('i', '#', function()
    local col = vim.api.nvim_win_get_cursor(0)[2]
    local before = vim.api.nvim_get_current_line():sub(col, col)
    if auto_menu and (col == 0 or before:match('%s')) then
      return '#<C-x><C-o>'
    end
    return '#'
  end, { buffer = buf, expr = true, desc = 'Kgent chat: # and the context variables' })
  -- `/` at the very start of the prompt opens the menu of slash commands (kgent.slash).
  vim.keymap.set('i', '/', function()
    local row, col = unpack(vim.api.nvim_win_get_cursor(0))
    return (auto_menu and row == 1 and col == 0) and '/<C-x><C-o>' or '/'
  end, { buffer = buf, expr = true, desc = 'Kgent chat: / and the slash commands' })
  vim.api.nvim_create_autocmd('BufWinEnter', {
    buffer = buf,
    callback = function()
      vim.schedule(function()
        M.show_header()
      end)
    end,
  })
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
    C.origin_win = vim.api.nvim_get_current_win()
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
      .. (config.options.chat.busy == 'steer' and 'follow-up' or 'steer')
      .. ' · # context'
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
      vim.schedule(function()
        M.on_run_end(a.data)
      end)
    elseif
      type(a.data) == 'table'
      and a.data.parentRunId == nil -- a sub-agent's queue is its own
      and type(a.data.event) == 'table'
      and a.data.event.type == 'queue_update'
    then
      M.on_queue(a.data.event)
    end
  end,
})

return M
