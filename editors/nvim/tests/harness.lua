-- A small test harness for `nvim --headless -l`: test(name, fn), helpers to wait on the event loop, a fresh
-- workspace + state dir + daemon per test, and a stubbed vim.ui.select. Ends with "N passed, N failed".
local H = {}

local tests = {}
H.kgent_bin = assert(os.getenv('KGENT_TEST_KGENT'), 'set KGENT_TEST_KGENT to the kgent executable')

function H.test(name, fn)
  tests[#tests + 1] = { name = name, fn = fn }
end

local function out(s)
  io.stdout:write(s .. '\n')
  io.stdout:flush()
end

-- Deadlines are generous on purpose: the suite must pass on a loaded machine (a busy CI runner, `stress`), and a
-- deadline only has to turn a hang into a failure. Waits return as soon as what they wait for has happened.
H.WAIT_MS = 60000

--- Pump the event loop until cond() is true; fail the test after `ms` (default H.WAIT_MS).
function H.wait_for(cond, what, ms)
  ms = ms or H.WAIT_MS
  local ok = vim.wait(ms, function()
    local s, r = pcall(cond)
    return s and r
  end, 10)
  if not ok then
    error(('timed out after %d ms waiting for %s'):format(ms, what), 2)
  end
end

function H.eq(expected, actual, what)
  if not vim.deep_equal(expected, actual) then
    error(('%s: expected %s, got %s'):format(what or 'value', vim.inspect(expected), vim.inspect(actual)), 2)
  end
end

--- Let every callback scheduled so far (vim.schedule) run: they run in order, so once ours has, theirs have.
function H.flush()
  local done = false
  vim.schedule(function()
    done = true
  end)
  H.wait_for(function()
    return done
  end, 'scheduled callbacks')
end

function H.truthy(v, what)
  if not v then
    error((what or 'assertion') .. ' failed', 2)
  end
  return v
end

--- Whether some line of `lines` contains `needle` (plain).
function H.has_line(lines, needle)
  for _, l in ipairs(lines) do
    if l:find(needle, 1, true) then
      return true
    end
  end
  return false
end

--- What Neovim draws of each line of window `win` holding `needle`, as a person sees a line they are not on (the
--- window's conceal on the cursor line too): its screen rows' text, runs of blanks as one, and the highlights
--- (screen attributes) its non-blank cells are drawn with (one: nothing in it taken for markup).
--- `engine`: "syntax" (Vim's markdown syntax, what a plain Neovim shows) or "treesitter" (Neovim's markdown parser,
--- what most configurations show).
---@return string[] texts, integer[][] highlights
function H.drawn(win, needle, engine)
  local buf = vim.api.nvim_win_get_buf(win)
  vim.api.nvim_buf_call(buf, function()
    vim.cmd('syntax clear')
    vim.b.current_syntax = nil
    if engine == 'treesitter' then
      vim.treesitter.start(buf, 'markdown')
    else
      vim.cmd('runtime syntax/markdown.vim')
    end
  end)
  local cursor, cc = vim.api.nvim_win_get_cursor(win), vim.wo[win].concealcursor
  vim.wo[win].concealcursor = 'n'
  local info = vim.fn.getwininfo(win)[1]
  local texts, highlights = {}, {}
  for lnum, line in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
    if line:find(needle, 1, true) then
      vim.api.nvim_win_set_cursor(win, { lnum, 0 })
      if engine == 'treesitter' then
        -- Neovim 0.11's highlighter parses asynchronously, a slice per redraw: parse the whole buffer (and its
        -- markdown_inline injections) now, so the redraw draws what the parser makes of this text, not a partial tree.
        vim.treesitter.get_parser(buf, 'markdown'):parse(true)
      end
      vim.cmd('redraw!')
      local cells, attrs = {}, {}
      for row = vim.fn.screenpos(win, lnum, 1).row, vim.fn.screenpos(win, lnum, #line).row do
        for c = info.wincol, info.wincol + info.width - 1 do
          local cell = vim.fn.screenstring(row, c)
          cells[#cells + 1] = cell
          local a = vim.fn.screenattr(row, c)
          if cell:find('%S') and not vim.tbl_contains(attrs, a) then
            attrs[#attrs + 1] = a
          end
        end
      end
      texts[#texts + 1] = (table.concat(cells):gsub('%s+', ' '))
      highlights[#highlights + 1] = attrs
    end
  end
  if engine == 'treesitter' then
    vim.treesitter.stop(buf)
  end
  vim.wo[win].concealcursor = cc
  vim.api.nvim_win_set_cursor(win, cursor)
  H.truthy(#texts > 0, 'a line with ' .. needle)
  return texts, highlights
end

function H.contains(lines, needle, what)
  if not H.has_line(lines, needle) then
    error(('%s: no line contains %q in:\n%s'):format(what or 'lines', needle, table.concat(lines, '\n')), 2)
  end
end

function H.read_file(path)
  local f = assert(io.open(path, 'r'))
  local s = f:read('*a')
  f:close()
  return s
end

function H.write_file(path, text)
  vim.fn.mkdir(vim.fs.dirname(path), 'p')
  local f = assert(io.open(path, 'w'))
  f:write(text)
  f:close()
end

-- Per-test environment ----------------------------------------------------------------------------------------------

local kgent = require('kgent')
local ui = require('kgent.ui')
local approval = require('kgent.approval')

H.events = {} -- agent/event params of the current test, in order
-- Runs of earlier tests: a daemon H.fresh stopped may still deliver their last events (a cancelled run_end) after the
-- next test began; they are not that test's.
local stale = {}
H.timeline = {} -- {what, data}: events, permission decisions and run ends, in order
H.notes = {} -- vim.notify messages
H.levels = {} -- {msg, level} of each vim.notify
H.prompts = {} -- {items, opts} of each vim.ui.select call

local group = vim.api.nvim_create_augroup('kgent-tests', { clear = true })
vim.api.nvim_create_autocmd('User', {
  group = group,
  pattern = { 'KgentEvent', 'KgentRunEnd', 'KgentPermission', 'KgentPermissionDone' },
  callback = function(a)
    if type(a.data) == 'table' and stale[a.data.runId] then
      return
    end
    if a.match == 'KgentEvent' then
      H.events[#H.events + 1] = a.data
    end
    H.timeline[#H.timeline + 1] = { a.match, a.data }
  end,
})

local real_notify = vim.notify
vim.notify = function(msg, level, o)
  H.notes[#H.notes + 1] = msg
  H.levels[#H.levels + 1] = { msg = msg, level = level or vim.log.levels.INFO }
  if os.getenv('KGENT_TEST_VERBOSE') then
    real_notify(msg, level, o)
  end
end

local real_select = vim.ui.select

--- A fresh workspace, state dir, daemon and plugin state. opts: files = {name = text}, setup = {...} overrides.
function H.fresh(opts)
  opts = opts or {}
  -- The previous test's daemon exits in the background (~0.5 s); its late on_exit touches only its own runs, and its
  -- late events are left out of the next test's (stale).
  for id in pairs(kgent.state.runs or {}) do
    stale[id] = true
  end
  for _, ev in ipairs(H.events) do
    stale[ev.runId or ''] = true
  end
  kgent.stop(0)
  for _, w in ipairs(vim.api.nvim_list_wins()) do
    if #vim.api.nvim_list_wins() > 1 and vim.api.nvim_win_get_config(w).relative ~= '' then
      pcall(vim.api.nvim_win_close, w, true)
    end
  end
  vim.cmd('silent! tabonly | silent! only')
  vim.cmd('enew')
  vim.cmd('silent! %bwipeout! #')
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if b ~= vim.api.nvim_get_current_buf() then
      pcall(vim.api.nvim_buf_delete, b, { force = true })
    end
  end
  ui.reset()
  approval.pending, approval.queue, approval.active, approval.blocking = {}, {}, nil, nil
  kgent.state.session_id, kgent.state.session_workspace, kgent.state.run_id = nil, nil, nil
  kgent.state.runs = {}
  H.events, H.timeline, H.notes, H.prompts, H.levels = {}, {}, {}, {}, {}
  vim.ui.select = real_select

  local root = vim.fn.tempname()
  local ws = root .. '/ws'
  local state = root .. '/state'
  vim.fn.mkdir(ws, 'p')
  vim.fn.mkdir(state, 'p')
  ws = vim.uv.fs_realpath(ws)
  for name, text in pairs(opts.files or {}) do
    H.write_file(ws .. '/' .. name, text)
  end
  H.ws, H.state_dir, H.root = ws, state, root
  local setup = vim.tbl_deep_extend('force', {
    cmd = { H.kgent_bin, 'serve', '--stdio' },
    env = { KGENT_STATE_DIR = state },
    provider = 'scripted',
    model = 'hello',
    mode = 'ask',
    -- Most tests answer through a stubbed vim.ui.select; the inline approvals (the default) have their own tests.
    approval = 'select',
    workspace = ws,
    log_file = root .. '/kgent.log',
    transcript = { layout = 'vsplit' },
  }, opts.setup or {})
  kgent.setup(setup)
  return ws
end

--- Replace vim.ui.select: `decide(items, opts, on_choice)`; every call is recorded in H.prompts.
function H.stub_select(decide)
  vim.ui.select = function(items, o, on_choice)
    H.prompts[#H.prompts + 1] = { items = items, opts = o }
    decide(items, o, on_choice)
  end
end

--- The item of an approval prompt whose option kind is `kind` ("allow_once", ...), or the "Show diff" item.
function H.item(items, kind)
  for _, it in ipairs(items) do
    if (kind == 'diff' and it.action == 'diff') or (it.option and it.option.kind == kind) then
      return it
    end
  end
  error('no item of kind ' .. kind)
end

--- Answer every approval with the option of `kind`.
function H.answer_all(kind)
  H.stub_select(function(items, _, on_choice)
    on_choice(H.item(items, kind))
  end)
end

--- Events of type `ty` (their `event` tables) of the current test.
function H.of_type(ty)
  local found = {}
  for _, p in ipairs(H.events) do
    if p.event.type == ty then
      found[#found + 1] = p.event
    end
  end
  return found
end

--- Run `:Kgent run ...`-style: call fn, then wait for the run_end of the run it started; returns the run_end.
function H.wait_run_end(ms)
  H.wait_for(function()
    return #H.of_type('run_end') > 0
  end, 'run_end', ms)
  return H.of_type('run_end')[1]
end

--- A scripted-provider script (its path, usable as the model) that stops at an approval before it answers: turn 0
--- asks to run `touch gate` (a write, so it asks; `true` would run unasked in the sandbox), turn 1 answers. A test holds that prompt while it queues a steering or follow-up message, so
--- the message always reaches a live run. The script restarts at turn 0 after each delivered message: answer the
--- prompts after the first at once.
function H.gate_script()
  local path = vim.fn.tempname() .. '-gate.json'
  H.write_file(
    path,
    vim.json.encode({
      { { text = 'Checking first.' }, { tool = 'bash', args = { command = 'touch gate' } } },
      { { text = 'Done.' } },
    })
  )
  return path
end

function H.transcript()
  return ui.lines()
end

--- The notifications at `level` (vim.log.levels.*).
function H.notes_at(level)
  local found = {}
  for _, n in ipairs(H.levels) do
    if n.level == level then
      found[#found + 1] = n.msg
    end
  end
  return found
end

--- Write a scripted-provider script (a list of turns) and return its path (usable as the model).
function H.script(turns)
  local path = vim.fn.tempname() .. '-script.json'
  H.write_file(path, vim.json.encode(turns))
  return path
end

--- Press `keys` in window `win` (as typed: mappings apply), then let scheduled callbacks run.
function H.press(win, keys)
  vim.api.nvim_set_current_win(win)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), 'mx', false)
  H.flush()
end

function H.run_all()
  local passed, failed = 0, 0
  local filter = os.getenv('KGENT_TEST_FILTER')
  local t_all = vim.uv.hrtime()
  for _, t in ipairs(tests) do
    if not filter or t.name:find(filter, 1, true) then
      local t0 = vim.uv.hrtime()
      local ok, err = xpcall(t.fn, debug.traceback)
      local dt = (vim.uv.hrtime() - t0) / 1e9
      if ok then
        passed = passed + 1
        out(('ok   %s (%.2f s)'):format(t.name, dt))
      else
        failed = failed + 1
        out(('FAIL %s (%.2f s)\n%s'):format(t.name, dt, tostring(err)))
        if H.root then
          local ok2, log = pcall(H.read_file, H.root .. '/kgent.log')
          if ok2 and log ~= '' then
            out('--- daemon log:\n' .. log)
          end
        end
      end
    end
  end
  kgent.stop(H.WAIT_MS)
  out(('# %.1f s'):format((vim.uv.hrtime() - t_all) / 1e9))
  out(('%d passed, %d failed'):format(passed, failed))
  os.exit(failed == 0 and passed > 0 and 0 or 1)
end

return H
