-- The plugin against the real daemon on the scripted provider, in real headless Neovim:
--   KGENT_TEST_KGENT=/path/to/.venv/bin/kgent nvim --headless -u NONE -i NONE -n -l tests/test_kgent.lua
-- (tests/run.sh does this). KGENT_TEST_FILTER=substring runs only matching tests.
local here = vim.fs.dirname(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p'))
local plugin_dir = vim.fs.dirname(here)
vim.opt.rtp:prepend(plugin_dir)
vim.cmd('runtime plugin/kgent.lua')
vim.o.swapfile = false
vim.o.shortmess = vim.o.shortmess .. 'AF'

local H = dofile(here .. '/harness.lua')
local kgent = require('kgent')
local approval = require('kgent.approval')
local test, eq, truthy, contains = H.test, H.eq, H.truthy, H.contains

local SAMPLE = 'value = 1\nprint(value)\n'

test('approve: tool-loop edits and runs, the open buffer is reloaded, the transcript has it all', function()
  local ws = H.fresh({ files = { ['sample.py'] = SAMPLE }, setup = { model = 'tool-loop' } })
  vim.cmd.edit(ws .. '/sample.py')
  local src = vim.api.nvim_get_current_buf()
  eq({ 'value = 1', 'print(value)' }, vim.api.nvim_buf_get_lines(src, 0, -1, false), 'buffer before')
  H.answer_all('allow_once')

  vim.cmd('Kgent run Change value to 2 in sample.py and check it runs.')
  local e = H.wait_run_end()
  eq('settled', e.status, 'status')
  eq({ 'sample.py' }, e.changedPaths, 'changedPaths')
  eq('value = 2\nprint(value)\n', H.read_file(ws .. '/sample.py'), 'file on disk')

  -- Two prompts: the edit (with a "Show diff" choice first) and the bash command.
  eq(2, #H.prompts, 'prompts')
  eq('Show diff', H.prompts[1].items[1].label, 'first item of the edit prompt')
  eq('kgent.permission', H.prompts[1].opts.kind, 'select kind')
  contains({ H.prompts[1].opts.prompt }, 'sample.py', 'edit prompt')
  contains({ H.prompts[2].opts.prompt }, "grep -n 'value = 2' sample.py && python3 sample.py", 'bash prompt: command')
  contains({ H.prompts[2].opts.prompt }, 'runs a shell command', 'bash prompt: reason')
  -- No diff for a command: its first item only shows the details (a picker's preselected item never approves).
  eq('details', H.prompts[2].items[1].action, 'first item of the bash prompt')
  eq('Show details', H.prompts[2].items[1].label, 'first item label of the bash prompt')
  for _, p in ipairs(H.prompts) do
    truthy(p.items[1].option == nil, 'the first item of every prompt answers nothing')
  end

  -- The open buffer was reloaded from disk (checktime) at run end.
  eq({ 'value = 2', 'print(value)' }, vim.api.nvim_buf_get_lines(src, 0, -1, false), 'buffer after')
  eq(false, vim.bo[src].modified, 'buffer modified')

  -- Events arrived complete and in order.
  for i, p in ipairs(H.events) do
    eq(i - 1, p.seq, 'seq of event ' .. i)
  end

  local tr = H.transcript()
  eq('markdown', vim.bo[require('kgent.ui').buf()].filetype, 'transcript filetype')
  contains(tr, '**You:** Change value to 2', 'transcript')
  contains(tr, '> Look at the file first.', 'transcript thinking')
  contains(tr, '✓ Read sample.py · completed', 'transcript')
  contains(tr, 'allowed once', 'transcript')
  contains(tr, 'Updated sample.py: value is now 2, and running it prints 2.', 'transcript')
  contains(tr, '**Run settled** · end', 'transcript')
  contains(tr, '- ' .. ws .. '/sample.py', 'transcript changed file')
  contains(tr, '+value = 2', 'transcript patch')
  truthy(not H.has_line(tr, 'awaiting approval'), 'no tool left awaiting approval')
  truthy(not H.has_line(tr, '**Approve?**'), 'approval = "select": no inline block')

  -- <CR> on the changed-file line opens it.
  local tbuf = require('kgent.ui').buf()
  local twin = vim.fn.bufwinid(tbuf)
  truthy(twin ~= -1, 'transcript window open')
  vim.api.nvim_set_current_win(twin)
  for i, l in ipairs(vim.api.nvim_buf_get_lines(tbuf, 0, -1, false)) do
    if l == '- ' .. ws .. '/sample.py' then
      vim.api.nvim_win_set_cursor(twin, { i, 0 })
    end
  end
  require('kgent.ui').open_file_under_cursor()
  eq(ws .. '/sample.py', vim.api.nvim_buf_get_name(0), 'opened file')
end)

test('reject: nothing is written, refused calls are reported', function()
  local ws = H.fresh({ files = { ['sample.py'] = SAMPLE }, setup = { model = 'tool-loop' } })
  H.answer_all('reject_once')
  kgent.run('Change value to 2')
  local e = H.wait_run_end()
  eq('settled', e.status, 'status')
  eq({}, e.changedPaths, 'changedPaths')
  eq(SAMPLE, H.read_file(ws .. '/sample.py'), 'file on disk')
  local denied = 0
  for _, u in ipairs(H.of_type('tool_update')) do
    if u.status == 'failed' and (u.output or ''):find('permission_denied', 1, true) then
      denied = denied + 1
    end
  end
  eq(2, denied, 'denied tool results (edit and bash)')
  for _, r in ipairs(H.of_type('permission_resolved')) do
    eq(false, r.approved, 'approved')
    eq('host', r.source, 'source')
  end
  contains(H.transcript(), '✗ Edit sample.py · failed · rejected', 'transcript')
end)

test('dismissing the picker rejects (nothing is approved by default)', function()
  local ws = H.fresh({ files = { ['sample.py'] = SAMPLE }, setup = { model = 'tool-loop' } })
  H.stub_select(function(_, _, on_choice)
    on_choice(nil)
  end)
  kgent.run('Change value to 2')
  local e = H.wait_run_end()
  eq(SAMPLE, H.read_file(ws .. '/sample.py'), 'file on disk')
  eq({}, e.changedPaths, 'changedPaths')
  for _, r in ipairs(H.of_type('permission_resolved')) do
    eq(false, r.approved, 'approved')
  end
end)

test('diff preview: current vs proposed in scratch buffers, nothing written, closed after the answer', function()
  local ws = H.fresh({ files = { ['sample.py'] = SAMPLE }, setup = { model = 'tool-loop' } })
  local seen
  local tabs_before = #vim.api.nvim_list_tabpages()
  H.stub_select(function(items, _, on_choice)
    local diff_item = items[1].action == 'diff' and items[1] or nil
    if diff_item and not seen and #H.prompts == 1 then
      return on_choice(diff_item)
    end
    if diff_item and not seen then
      -- Second ask for the same edit, with the diff on screen.
      local tab = vim.api.nvim_get_current_tabpage()
      local wins = vim.api.nvim_tabpage_list_wins(tab)
      seen = { tabs = #vim.api.nvim_list_tabpages(), wins = {}, disk = H.read_file(ws .. '/sample.py') }
      for _, w in ipairs(wins) do
        local b = vim.api.nvim_win_get_buf(w)
        seen.wins[#seen.wins + 1] = {
          name = vim.api.nvim_buf_get_name(b),
          lines = vim.api.nvim_buf_get_lines(b, 0, -1, false),
          buftype = vim.bo[b].buftype,
          modifiable = vim.bo[b].modifiable,
          filetype = vim.bo[b].filetype,
          diff = vim.wo[w].diff,
          buf = b,
        }
      end
    end
    on_choice(H.item(items, 'allow_once'))
  end)
  kgent.run('Change value to 2')
  local e = H.wait_run_end()
  truthy(seen, 'the prompt was asked again with the diff open')
  eq(tabs_before + 1, seen.tabs, 'a diff tab')
  eq(2, #seen.wins, 'two diff windows')
  local cur, new = seen.wins[1], seen.wins[2]
  truthy(cur.name:find('sample.py (current)', 1, true), 'current name: ' .. cur.name)
  truthy(new.name:find('sample.py (proposed)', 1, true), 'proposed name: ' .. new.name)
  eq({ 'value = 1', 'print(value)' }, cur.lines, 'current content')
  eq({ 'value = 2', 'print(value)' }, new.lines, 'proposed content')
  -- The current side is read-only; the proposed side is editable (approve with changes: :w / ga answer with it).
  eq({ 'nofile', false }, { cur.buftype, cur.modifiable }, 'current: read-only scratch')
  eq({ 'acwrite', true }, { new.buftype, new.modifiable }, 'proposed: editable, written by answering')
  for _, w in ipairs(seen.wins) do
    eq(true, w.diff, "'diff'")
    eq('python', w.filetype, 'filetype')
  end
  eq(SAMPLE, seen.disk, 'nothing written while previewing')
  -- After the answer: the preview is gone, the edit went through.
  eq('settled', e.status, 'status')
  eq(tabs_before, #vim.api.nvim_list_tabpages(), 'diff tab closed')
  truthy(not vim.api.nvim_buf_is_valid(cur.buf) and not vim.api.nvim_buf_is_valid(new.buf), 'scratch buffers wiped')
  eq('value = 2\nprint(value)\n', H.read_file(ws .. '/sample.py'), 'file on disk')
end)

test('diff preview of a new file (write): empty current side', function()
  H.fresh({ setup = { model = 'two-writes' } })
  local seen
  H.stub_select(function(items, _, on_choice)
    if #H.prompts == 1 then
      return on_choice(H.item(items, 'diff'))
    end
    if not seen then
      seen = {}
      for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
        seen[#seen + 1] = vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(w), 0, -1, false)
      end
    end
    on_choice(H.item(items, 'allow_always'))
  end)
  kgent.run('write notes')
  local e = H.wait_run_end()
  eq({ { '' }, { 'first' } }, seen, 'current (empty) vs proposed')
  -- allow_always answered the second write: one prompt for two writes (the first asked twice for the diff).
  eq(2, #H.prompts, 'prompts')
  local sources = vim.tbl_map(function(r)
    return r.source
  end, H.of_type('permission_resolved'))
  eq({ 'host', 'session_rule' }, sources, 'permission sources')
  eq('settled', e.status, 'status')
  contains(H.transcript(), 'always allowed this session', 'transcript')
  contains(H.transcript(), 'allowed by the session rule `write', 'transcript')
end)

test(
  'show details of a command: the call in a scratch tab, nothing run while it is open, closed after the answer',
  function()
    local ws = H.fresh({ files = { ['sample.py'] = SAMPLE }, setup = { model = 'tool-loop' } })
    local tabs_before = #vim.api.nvim_list_tabpages()
    local seen
    H.stub_select(function(items, _, on_choice)
      if items[1].action == 'diff' then
        return on_choice(H.item(items, 'allow_once'))
      end
      if not seen then
        if vim.api.nvim_buf_get_name(0):find('(details)', 1, true) == nil then
          return on_choice(items[1]) -- "Show details"
        end
        local b = vim.api.nvim_get_current_buf()
        seen = {
          lines = vim.api.nvim_buf_get_lines(b, 0, -1, false),
          buftype = vim.bo[b].buftype,
          buf = b,
          tabs = #vim.api.nvim_list_tabpages(),
          updates = #H.of_type('tool_update'),
        }
      end
      on_choice(H.item(items, 'reject_once'))
    end)
    kgent.run('Change value to 2')
    local e = H.wait_run_end()
    truthy(seen, 'asked again with the details on screen')
    eq(tabs_before + 1, seen.tabs, 'a details tab')
    eq('nofile', seen.buftype, 'scratch buffer')
    contains(seen.lines, "    grep -n 'value = 2' sample.py && python3 sample.py", 'the command')
    contains(seen.lines, 'Reason:    runs a shell command', 'the reason')
    contains(seen.lines, 'Risk:      high · shell · workspace', 'risk, operation, scope')
    eq(tabs_before, #vim.api.nvim_list_tabpages(), 'details tab closed')
    truthy(not vim.api.nvim_buf_is_valid(seen.buf), 'scratch buffer wiped')
    eq('settled', e.status, 'status')
    eq('value = 2\nprint(value)\n', H.read_file(ws .. '/sample.py'), 'the edit went through')
    local last = H.of_type('permission_resolved')
    eq(false, last[#last].approved, 'the command was rejected')
  end
)

test(
  'a blocking picker (as the built-in inputlist()) is ended by a withdrawal; the next prompt waits for it',
  function()
    local ws = H.fresh({ files = { ['sample.py'] = SAMPLE }, setup = { model = 'tool-loop', approval_timeout = 0.3 } })
    local depth, max_depth, keys = 0, 0, {}
    H.stub_select(function(_, _, on_choice)
      -- Like inputlist(): wait for a key inside vim.ui.select while the event loop runs, then answer.
      depth = depth + 1
      max_depth = math.max(max_depth, depth)
      local key
      vim.wait(H.WAIT_MS, function()
        local c = vim.fn.getchar(0)
        if c ~= 0 then
          key = c
          return true
        end
      end, 10)
      depth = depth - 1
      keys[#keys + 1] = key or 'none'
      on_choice(nil) -- inputlist() returned 0: no choice
    end)
    kgent.run('Change value to 2')
    local e = H.wait_run_end()
    eq('settled', e.status, 'status')
    eq({ 27, 27 }, keys, 'each blocking picker ended by <Esc> when its prompt was withdrawn')
    eq(1, max_depth, 'no picker nested in another')
    eq(2, #H.prompts, 'prompts (edit, bash)')
    for _, r in ipairs(H.of_type('permission_resolved')) do
      eq('timeout', r.source, 'source')
    end
    eq(0, vim.fn.getchar(0), 'no key left over')
    eq(nil, approval.blocking, 'no picker blocking')
    eq(SAMPLE, H.read_file(ws .. '/sample.py'), 'file on disk')
  end
)

test('cancel: a long bash command is killed, the run ends cancelled, the session goes on', function()
  H.fresh({ setup = { model = 'long-bash' } })
  H.answer_all('allow_once')
  kgent.run('run the long command')
  H.wait_for(function()
    for _, u in ipairs(H.of_type('tool_update')) do
      if u.status == 'in_progress' then
        return true
      end
    end
  end, 'bash in progress')
  local t0 = vim.uv.hrtime()
  vim.cmd('Kgent cancel')
  local e = H.wait_run_end()
  local dt = (vim.uv.hrtime() - t0) / 1e9
  eq('cancelled', e.status, 'status')
  eq('cancelled', e.stopReason, 'stopReason')
  -- The command (sleep 60) was killed, not waited for: a bound well below its remaining time, loose enough for a
  -- loaded machine.
  truthy(dt < 30, ('cancel took %.2f s'):format(dt))
  local last = H.of_type('tool_update')
  eq('failed', last[#last].status, 'bash result')
  contains(H.transcript(), '**Run cancelled** · cancelled', 'transcript')
  eq(nil, kgent.state.run_id, 'no current run')
  -- The same session continues.
  local sid = kgent.state.session_id
  H.events = {}
  kgent.run('hello again', { model = 'hello' })
  local e2 = H.wait_run_end()
  eq('settled', e2.status, 'second run')
  eq(sid, e2.sessionId, 'same session')
end)

--- A stub picker that opens a floating window (like telescope/snacks) and never answers.
local function hanging_picker()
  local picker = { wins = {}, choices = {} }
  H.stub_select(function(items, _, on_choice)
    local buf = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_lines(
      buf,
      0,
      -1,
      false,
      vim.tbl_map(function(it)
        return it.label
      end, items)
    )
    picker.wins[#picker.wins + 1] = vim.api.nvim_open_win(
      buf,
      true,
      { relative = 'editor', row = 1, col = 1, width = 30, height = #items, style = 'minimal' }
    )
    picker.choices[#picker.choices + 1] = { items = items, on_choice = on_choice }
  end)
  return picker
end

test('withdrawn prompt: cancelling the run closes the open picker; a late answer is ignored', function()
  local ws = H.fresh({ files = { ['sample.py'] = SAMPLE }, setup = { model = 'tool-loop' } })
  local picker = hanging_picker()
  kgent.run('Change value to 2')
  H.wait_for(function()
    return approval.active ~= nil and #picker.wins == 1
  end, 'the approval prompt')
  truthy(vim.api.nvim_win_is_valid(picker.wins[1]), 'picker open')
  kgent.cancel()
  local e = H.wait_run_end()
  eq('cancelled', e.status, 'status')
  truthy(not vim.api.nvim_win_is_valid(picker.wins[1]), 'picker window closed')
  eq(0, vim.tbl_count(approval.pending), 'no pending prompt')
  eq(nil, approval.active, 'no active prompt')
  -- The withdrawal came before run_end.
  local withdrawn_at, end_at
  for i, t in ipairs(H.timeline) do
    if t[1] == 'KgentPermissionDone' and t[2].how == 'withdrawn' then
      withdrawn_at = withdrawn_at or i
    elseif t[1] == 'KgentRunEnd' then
      end_at = i
    end
  end
  truthy(withdrawn_at and end_at and withdrawn_at < end_at, 'withdrawn before run_end')
  -- A late answer from the picker changes nothing.
  local c = picker.choices[1]
  c.on_choice(H.item(c.items, 'allow_once'))
  H.flush() -- the picker's answer is handled in a scheduled callback
  eq(SAMPLE, H.read_file(ws .. '/sample.py'), 'file on disk')
  contains(H.notes, 'approval withdrawn', 'notification')
  contains(H.transcript(), '✗ Edit sample.py · cancelled · prompt withdrawn', 'transcript')
  truthy(not H.has_line(H.transcript(), 'awaiting approval'), 'no tool left awaiting approval')
end)

test('withdrawn prompt: approvalTimeout rejects, the prompts close, the run goes on', function()
  local ws = H.fresh({ files = { ['sample.py'] = SAMPLE }, setup = { model = 'tool-loop', approval_timeout = 0.3 } })
  local picker = hanging_picker()
  kgent.run('Change value to 2')
  local e = H.wait_run_end()
  eq('settled', e.status, 'status')
  eq(2, #picker.wins, 'two prompts shown (edit, bash)')
  for _, w in ipairs(picker.wins) do
    truthy(not vim.api.nvim_win_is_valid(w), 'picker window closed')
  end
  local res = H.of_type('permission_resolved')
  eq(2, #res, 'resolutions')
  for _, r in ipairs(res) do
    eq('timeout', r.source, 'source')
    eq(false, r.approved, 'approved')
  end
  eq(SAMPLE, H.read_file(ws .. '/sample.py'), 'file on disk')
  eq(0, vim.tbl_count(approval.pending), 'no pending prompt')
  contains(H.transcript(), 'rejected: no answer in time', 'transcript')
end)

test(':Kgent continue resumes the most recent session at once and runs the prompt in it', function()
  H.fresh({})
  kgent.run('First session.')
  local first = H.wait_run_end().sessionId
  kgent.new_session()
  H.events = {}
  kgent.run('Second session.')
  local second = H.wait_run_end().sessionId
  -- A new Neovim session: nothing known of either; :Kgent continue asks nobody which one.
  kgent.stop(H.WAIT_MS)
  require('kgent.ui').reset()
  kgent.state.session_id, kgent.state.runs = nil, {}
  H.events = {}
  H.stub_select(function()
    error('continue must not ask which session')
  end)
  vim.cmd('Kgent continue And once more.')
  local e = H.wait_run_end()
  truthy(first ~= second, 'two sessions')
  eq(second, e.sessionId, 'the latest session, continued')
  contains(H.transcript(), '**You:** Second session.', 'its history shown')
end)

test('resume: :Kgent resume picks a session of agent/sessions, :Kgent run continues it', function()
  H.fresh({})
  kgent.run('Say hello.')
  local first = H.wait_run_end()
  local sid = first.sessionId
  -- A new Neovim session: the daemon restarts on the same state dir; the plugin knows no session.
  kgent.stop(H.WAIT_MS)
  require('kgent.ui').reset()
  kgent.state.session_id, kgent.state.runs = nil, {}
  H.events = {}
  local labels
  H.stub_select(function(items, o, on_choice)
    labels = vim.tbl_map(o.format_item, items)
    eq('kgent.session', o.kind, 'select kind')
    on_choice(items[1])
  end)
  vim.cmd('Kgent resume')
  H.wait_for(function()
    return kgent.state.session_id == sid
  end, 'the resumed session')
  eq(1, #labels, 'one session offered')
  contains(labels, sid, 'label has the id')
  contains(labels, 'Say hello.', 'label has the title')
  local tr = H.transcript()
  contains(tr, '## Resumed session ' .. sid, 'transcript')
  contains(tr, '**You:** Say hello.', 'transcript history')
  contains(tr, 'Hello from the scripted provider', 'transcript history')

  vim.cmd('Kgent run And again.')
  local e = H.wait_run_end()
  eq(sid, e.sessionId, 'continued the same session')
  local sessions
  kgent.sessions(function(_, s)
    sessions = s
  end)
  H.wait_for(function()
    return sessions
  end, 'agent/sessions')
  eq(1, #sessions, 'still one session')
  truthy(sessions[1].entryCount > 3, 'the session grew')
  -- :Kgent sessions lists it.
  local echoed
  local real_echo = vim.api.nvim_echo
  vim.api.nvim_echo = function(chunks)
    echoed = table.concat(vim.tbl_map(function(c)
      return c[1]
    end, chunks))
  end
  vim.cmd('Kgent sessions')
  H.wait_for(function()
    return echoed
  end, ':Kgent sessions')
  vim.api.nvim_echo = real_echo
  contains(vim.split(echoed, '\n'), sid .. '  ', ':Kgent sessions')
  contains(vim.split(echoed, '\n'), 'entries)  Say hello.', ':Kgent sessions')
end)

test(':Kgent new starts a new session', function()
  H.fresh({})
  kgent.run('one')
  local a = H.wait_run_end()
  vim.cmd('Kgent new')
  H.events = {}
  kgent.run('two')
  local b = H.wait_run_end()
  truthy(a.sessionId ~= b.sessionId, 'a new session')
end)

test('a visual range is sent as a resource block', function()
  local ws = H.fresh({ files = { ['util.py'] = 'import os\ndef f(x):\n    return x * 2\n' } })
  vim.cmd.edit(ws .. '/util.py')
  vim.cmd('2,3Kgent run Explain this function.')
  local e = H.wait_run_end()
  eq('settled', e.status, 'status')
  local start = H.of_type('run_start')[1]
  local uri = vim.uri_from_fname(ws .. '/util.py') .. '#L2-L3'
  contains({ start.prompt }, 'Explain this function.', 'prompt')
  contains({ start.prompt }, '<resource uri="' .. uri .. '">', 'prompt')
  contains({ start.prompt }, '">\ndef f(x):\n    return x * 2\n</resource>', 'prompt')
  truthy(not start.prompt:find('import os', 1, true), 'only the range')
end)

test('steer and follow-up reach the live run', function()
  -- The run waits at its first approval until the message is queued (no race with a model about to end).
  H.fresh({ setup = { model = H.gate_script() } })
  local function delivered(source, text)
    for _, u in ipairs(H.of_type('user_message')) do
      if u.source == source and u.text == text then
        return true
      end
    end
    return false
  end
  -- turns: the script's first turn asks, the message restarts it (first turn again, then the answer); a follow-up
  -- comes after the answer, so one more.
  for _, case in ipairs({
    { 'steer', 'steering', 'steer', 'steer', 3 },
    { 'followup', 'followUp', 'follow_up', 'follow-up', 4 },
  }) do
    local cmd, queue_key, source, label, turns = case[1], case[2], case[3], case[4], case[5]
    H.events = {}
    local held
    H.stub_select(function(items, _, on_choice)
      local reject = function()
        on_choice(H.item(items, 'reject_once'))
      end
      if held then
        return reject()
      end
      held = reject
    end)
    kgent.run('check first')
    H.wait_for(function()
      return held and kgent.state.run_id
    end, 'the run waiting at its approval')
    vim.cmd(('Kgent %s Use three.'):format(cmd))
    local function queued()
      for _, q in ipairs(H.of_type('queue_update')) do
        if vim.tbl_contains(q[queue_key] or {}, 'Use three.') then
          return true
        end
      end
      return false
    end
    H.wait_for(queued, cmd .. ': queue_update')
    held()
    local e = H.wait_run_end()
    eq('settled', e.status, cmd .. ': status')
    truthy(delivered(source, 'Use three.'), cmd .. ': delivered')
    eq(turns, e.turns, cmd .. ': the run went on after the message')
    contains(H.transcript(), ('**You (%s):** Use three.'):format(label), 'transcript')
  end
  -- After the run: nothing live to steer.
  H.notes = {}
  vim.cmd('Kgent steer too late')
  contains(H.notes, 'no live run', 'notification')
end)

test('two runs at once: two transcripts kgent://session/<id>, each run labelled, nothing interleaved', function()
  H.fresh({ files = { ['sample.py'] = SAMPLE }, setup = { model = 'tool-loop' } })
  local held = {}
  H.stub_select(function(items, _, on_choice)
    if #H.prompts == 1 then
      held[#held + 1] = function()
        on_choice(H.item(items, 'reject_once'))
      end
    else
      on_choice(H.item(items, 'reject_once'))
    end
  end)
  kgent.run('first', { new_session = true })
  H.wait_for(function()
    return #held == 1
  end, 'the first run asking')
  kgent.run('second', { new_session = true })
  -- The second run reaches the same call ids (its read call_1_1, its edit waiting behind the first's prompt).
  H.wait_for(function()
    return #H.of_type('permission_request') == 2
  end, 'both runs asking')
  held[1]()
  H.wait_for(function()
    return #H.of_type('run_end') == 2
  end, 'both run_ends')
  local starts = H.of_type('run_start')
  eq(2, #starts, 'run_starts')
  local tr = require('kgent.transcript')
  local by_prompt = {}
  for _, p in ipairs(H.events) do
    if p.event.type == 'run_start' then
      by_prompt[p.event.prompt] = { run = p.runId, session = p.sessionId }
    end
  end
  local a, b = by_prompt.first, by_prompt.second
  truthy(a and b and a.session ~= b.session, 'two sessions')
  for _, case in ipairs({ { a, b, 'first' }, { b, a, 'second' } }) do
    local mine, other, prompt = case[1], case[2], case[3]
    local buf = tr.buf(mine.session)
    eq('kgent://session/' .. mine.session, vim.api.nvim_buf_get_name(buf), prompt .. ': buffer name')
    local lines = tr.lines(mine.session)
    local function count(needle)
      local n = 0
      for _, l in ipairs(lines) do
        if l:find(needle, 1, true) then
          n = n + 1
        end
      end
      return n
    end
    eq(1, count('## Run ' .. mine.run), prompt .. ': its run labelled')
    eq(0, count(other.run), prompt .. ': nothing of the other run')
    eq(1, count('**You:** ' .. prompt), prompt .. ': its prompt')
    eq(1, count('✓ Read sample.py · completed'), prompt .. ': read line')
    eq(1, count('✗ Edit sample.py · failed · rejected'), prompt .. ': edit line')
    eq(1, count('sample.py` · failed · rejected'), prompt .. ': bash line')
    eq(1, count('**Run settled**'), prompt .. ': its summary')
    for _, bad in ipairs({ 'awaiting approval', '· pending', '· in progress', '· unfinished' }) do
      truthy(not H.has_line(lines, bad), 'no tool line left ' .. bad .. ' in:\n' .. table.concat(lines, '\n'))
    end
  end
  -- The picker over transcripts offers both sessions.
  local labels
  H.stub_select(function(items, o, on_choice)
    labels = vim.tbl_map(o.format_item, items)
    on_choice(nil)
  end)
  vim.cmd('Kgent transcripts')
  H.wait_for(function()
    return labels
  end, 'the transcript picker')
  contains(labels, a.session, 'picker')
  contains(labels, b.session, 'picker')
end)

test('errors are reported, not thrown: an unknown script', function()
  H.fresh({ setup = { model = 'no-such-script' } })
  local err
  kgent.run('hi', nil, function(e)
    err = e
  end)
  H.wait_for(function()
    return err
  end, 'the agent/run error')
  eq(-32001, err.code, 'code')
  eq('config_error', err.data.code, 'data.code')
  contains(H.notes, 'config_error', 'notification')
  contains(H.transcript(), 'could not start the run', 'transcript')
end)

test('the daemon exiting closes open prompts and ends the runs', function()
  H.fresh({ files = { ['sample.py'] = SAMPLE }, setup = { model = 'tool-loop' } })
  local picker = hanging_picker()
  kgent.run('Change value to 2')
  H.wait_for(function()
    return approval.active ~= nil
  end, 'the approval prompt')
  local run_id = kgent.state.run_id
  vim.cmd('Kgent stop')
  H.wait_for(function()
    return not kgent.state.runs[run_id].live
  end, 'the run marked ended')
  truthy(not vim.api.nvim_win_is_valid(picker.wins[1]), 'picker window closed')
  eq(0, vim.tbl_count(approval.pending), 'no pending prompt')
  -- The next command starts a new daemon.
  H.events = {}
  vim.ui.select = function(items, _, cb)
    cb(H.item(items, 'reject_once'))
  end
  kgent.run('again', { model = 'hello' })
  eq('settled', H.wait_run_end().status, 'a run on the restarted daemon')
end)

--- The lines of `:checkhealth kgent` (its buffer is wiped afterwards).
local function health_lines()
  vim.cmd('silent checkhealth kgent')
  local buf = vim.api.nvim_get_current_buf()
  eq('checkhealth', vim.bo[buf].filetype, 'the health buffer')
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  pcall(vim.cmd, 'tabclose')
  pcall(vim.api.nvim_buf_delete, buf, { force = true })
  return lines
end

test(':checkhealth kgent reports the daemon, protocol version and provider', function()
  H.fresh({})
  local lines = health_lines()
  local text = table.concat(lines, '\n')
  contains(lines, 'OK daemon command: ' .. H.kgent_bin, 'checkhealth')
  contains(lines, 'OK daemon answers initialize: kgent', 'checkhealth')
  contains(lines, 'OK protocol version 1', 'checkhealth')
  contains(lines, 'OK provider scripted, model hello', 'checkhealth')
  contains(lines, 'OK the scripted provider needs no API key', 'checkhealth')
  truthy(
    text:find('OK bubblewrap', 1, true) or text:find('WARNING no sandbox', 1, true),
    'a sandbox line in:\n' .. text
  )
  truthy(not text:find('ERROR', 1, true), 'no ERROR in:\n' .. text)
end)

test(':checkhealth kgent reports a missing daemon and a missing key', function()
  H.fresh({ setup = { provider = 'openai' } })
  local saved = {}
  for _, v in ipairs({ 'KGENT_API_KEY', 'DEEPSEEK_API_KEY', 'OPENAI_API_KEY' }) do
    saved[v] = vim.env[v]
    vim.env[v] = nil
  end
  local lines = health_lines()
  for v, val in pairs(saved) do
    vim.env[v] = val
  end
  contains(lines, 'WARNING no API key for provider openai', 'checkhealth')
  kgent.setup({ cmd = { '/nonexistent/kgent', 'serve', '--stdio' } })
  lines = health_lines()
  contains(lines, 'ERROR daemon command not found: /nonexistent/kgent', 'checkhealth')
end)

test('transcript layouts open a window without taking the cursor (or with it: focus)', function()
  H.fresh({})
  for _, layout in ipairs({ 'vsplit', 'split', 'tab', 'float' }) do
    kgent.setup(vim.tbl_deep_extend('force', require('kgent.config').options, { transcript = { layout = layout } }))
    vim.cmd('silent! tabonly | silent! only')
    local win = vim.api.nvim_get_current_win()
    local tw = require('kgent.ui').open()
    truthy(tw and vim.api.nvim_win_is_valid(tw), layout .. ': a window')
    eq(require('kgent.ui').buf(), vim.api.nvim_win_get_buf(tw), layout .. ': shows the transcript')
    eq(win, vim.api.nvim_get_current_win(), layout .. ': cursor stays')
    if layout == 'float' then
      truthy(vim.api.nvim_win_get_config(tw).relative ~= '', 'float: floating')
      vim.api.nvim_win_close(tw, true)
    end
  end
  kgent.setup(vim.tbl_deep_extend('force', require('kgent.config').options, { transcript = { layout = 'split' } }))
  vim.cmd('silent! tabonly | silent! only')
  vim.cmd('Kgent open')
  eq(require('kgent.ui').buf(), vim.api.nvim_get_current_buf(), ':Kgent open focuses the transcript')
end)

test('max_turns reaches the daemon: the run stops after that many model turns', function()
  H.fresh({ files = { ['sample.py'] = SAMPLE }, setup = { model = 'tool-loop', max_turns = 1 } })
  eq(1, require('kgent.config').settings().maxTurns, 'settings.maxTurns')
  kgent.run('Set value to 2')
  local done = H.wait_run_end()
  eq({ 'failed', 'max_turns', 1 }, { done.status, done.stopReason, done.turns }, 'run_end')
  truthy(not pcall(kgent.setup, { max_turns = 0 }), 'max_turns = 0 is refused')
end)

test('an api_key function reaches the daemon over the pipe only: no file holds the key', function()
  local key = 'sk-kgent-test-' .. tostring(vim.uv.hrtime())
  H.fresh({ setup = {
    api_key = function()
      return key
    end,
    log_level = 'DEBUG',
  } })
  eq(key, require('kgent.config').settings().apiKey, 'settings.apiKey')
  eq(nil, require('kgent.config').env().KGENT_API_KEY, 'not in the environment')
  kgent.run('Say hello.')
  eq('settled', H.wait_run_end().status, 'status')
  kgent.stop(H.WAIT_MS)
  local found = vim.fn.systemlist({ 'grep', '-rl', key, H.root, vim.fn.stdpath('state'), vim.fn.stdpath('log') })
  eq({}, found, 'files holding the key')
end)

test(':Kgent completes its subcommands; :Kgent log opens the daemon log', function()
  H.fresh({})
  local all = vim.fn.getcompletion('Kgent ', 'cmdline')
  for _, s in ipairs({ 'cancel', 'followup', 'log', 'new', 'resume', 'review', 'run', 'sessions', 'steer' }) do
    truthy(vim.tbl_contains(all, s), 'completes ' .. s)
  end
  eq({ 'restart', 'resume', 'review', 'rewind', 'rules', 'run' }, vim.fn.getcompletion('Kgent r', 'cmdline'), 'prefix')
  eq({ 'run' }, vim.fn.getcompletion("'<,'>Kgent run", 'cmdline'), 'with a range')
  vim.cmd('Kgent log')
  eq(H.root .. '/kgent.log', vim.api.nvim_buf_get_name(0), 'log buffer')
end)

test(':help kgent: doc/kgent.txt has clean tags that resolve', function()
  local copy = vim.fn.tempname()
  vim.fn.mkdir(copy .. '/doc', 'p')
  vim.fn.writefile(vim.fn.readfile(plugin_dir .. '/doc/kgent.txt'), copy .. '/doc/kgent.txt')
  vim.cmd('helptags ' .. vim.fn.fnameescape(copy .. '/doc')) -- raises E154 on a duplicate tag
  vim.opt.rtp:append(copy)
  for _, tag in ipairs({ 'kgent', 'kgent-config', ':Kgent-run', ':Kgent-resume', 'kgent-approvals', 'kgent.setup()' }) do
    vim.cmd('help ' .. tag)
    eq('help', vim.bo.buftype, 'help ' .. tag)
    -- It lands on the tag itself, not on a near match.
    truthy(
      vim.api.nvim_get_current_line():find('*' .. tag .. '*', 1, true),
      'help ' .. tag .. ' lands on *' .. tag .. '*, not on: ' .. vim.api.nvim_get_current_line()
    )
    vim.cmd('helpclose')
  end
  -- Every |link| to a kgent tag exists.
  local tags = {}
  for _, l in ipairs(vim.fn.readfile(copy .. '/doc/tags')) do
    tags[l:match('^[^\t]+')] = true
  end
  for _, l in ipairs(vim.fn.readfile(copy .. '/doc/kgent.txt')) do
    for link in l:gmatch('|([^|%s]+)|') do
      if link:find('kgent', 1, true) or link:find('Kgent', 1, true) then
        truthy(tags[link], 'tag exists: ' .. link)
      end
    end
  end
end)

-- Inline approvals, chat, lifecycle, conventions ----------------------------------------------------------------------

local tr_mod = require('kgent.transcript')

--- The session transcript's window and lines of the (only) pending approval's session.
local function pending_session()
  local p = approval.list()[1]
  return p and p.params.sessionId
end

test('inline approval: shown in the transcript, answered by keys while the transcript is scrolled', function()
  local ws = H.fresh({ files = { ['sample.py'] = SAMPLE }, setup = { model = 'tool-loop', approval = 'inline' } })
  local calls = 0
  vim.ui.select = function()
    calls = calls + 1
  end
  eq('', kgent.statusline() == '' and '' or 'started', 'statusline before the daemon (prewarm may start it)')
  kgent.run('Change value to 2')
  H.wait_for(function()
    return #approval.list() == 1
  end, 'the edit approval')
  local sid = pending_session()
  local buf = tr_mod.buf(sid)
  local lines = tr_mod.lines(sid)
  contains(lines, '**Approve?** Edit sample.py  [', 'approval header')
  contains(lines, '  why: ', 'reason')
  contains(lines, '    +value = 2', 'inline diff')
  contains(lines, '[a] Allow once', 'keys')
  contains(lines, '[R] Reject edits to `sample.py`', 'keys')
  contains(lines, '[d] diff', 'preview key')
  contains(lines, 'Edit sample.py · pending · awaiting approval', 'the tool line says it waits')
  local tool_row, block_row
  for i, l in ipairs(lines) do
    if l:find('Edit sample.py · pending', 1, true) then
      tool_row = i
    elseif l:find('**Approve?**', 1, true) then
      block_row = i
    end
  end
  local tl = {}
  for _, t in ipairs(H.timeline) do
    tl[#tl + 1] = t[1] .. ':' .. (t[1] == 'KgentEvent' and t[2].event.type or '')
  end
  truthy(
    tool_row < block_row,
    'the approval under its tool line:\n' .. table.concat(lines, '\n') .. table.concat(tl, ' ')
  )
  eq('kgent: waiting for you', kgent.statusline(), 'statusline')
  -- Nothing modal: the event loop and the editor go on; the transcript can be scrolled and read.
  local win = vim.fn.bufwinid(buf)
  truthy(win ~= -1, 'the transcript is on screen')
  vim.api.nvim_set_current_win(win)
  vim.cmd('normal! gg')
  eq(1, vim.api.nvim_win_get_cursor(win)[1], 'scrolled to the top')
  eq('n', vim.api.nvim_get_mode().mode, 'Normal mode, no prompt')
  -- d opens the diff tab (nothing written), then back to the transcript.
  H.press(win, 'd')
  truthy(vim.api.nvim_buf_get_name(0):find('sample.py (', 1, true), 'diff tab: ' .. vim.api.nvim_buf_get_name(0))
  eq(SAMPLE, H.read_file(ws .. '/sample.py'), 'nothing written while previewing')
  vim.cmd('tabprevious')
  -- a (cursor outside any block: the oldest pending call) allows the edit; the diff tab closes.
  H.press(win, 'a')
  H.wait_for(function()
    return #approval.list() == 1 and approval.list()[1].params.toolCall.name == 'bash'
  end, 'the bash approval')
  eq(1, #vim.api.nvim_list_tabpages(), 'diff tab closed')
  eq('value = 2\nprint(value)\n', H.read_file(ws .. '/sample.py'), 'the edit went through')
  -- The window stayed where the reader left it while the transcript grew.
  eq(1, vim.api.nvim_win_get_cursor(win)[1], 'the scrolled window did not jump to the end')
  -- r with the cursor on the bash block rejects it.
  local first = tr_mod.block_rows(approval.list()[1].inline.block)
  vim.api.nvim_win_set_cursor(win, { first + 1, 0 })
  H.press(win, 'r')
  local e = H.wait_run_end()
  eq('settled', e.status, 'status')
  eq(0, calls, 'vim.ui.select never called')
  lines = tr_mod.lines(sid)
  truthy(not H.has_line(lines, '**Approve?**'), 'approval blocks removed')
  -- No approval highlight is left behind on the lines that followed a removed block.
  for _, m in ipairs(vim.api.nvim_buf_get_extmarks(buf, -1, 0, -1, { details = true })) do
    local d = m[4]
    if d.line_hl_group == 'KgentApproval' or d.line_hl_group == 'KgentApprovalKey' then
      truthy(d.invalid, 'a stale approval highlight: ' .. vim.inspect(m) .. ' of ' .. #lines .. ' lines')
    end
  end
  eq('KgentTool', vim.api.nvim_get_hl(0, { name = 'KgentTool' }).link and 'KgentTool', 'groups defined')
  contains(lines, '✓ Edit sample.py · completed · allowed once', 'edit line')
  contains(lines, 'sample.py` · failed · rejected', 'bash line')
  eq('kgent: idle', kgent.statusline(), 'statusline after the run')
end)

test('inline approval: :Kgent cancel works while it is pending; the block goes', function()
  local ws = H.fresh({ files = { ['sample.py'] = SAMPLE }, setup = { model = 'tool-loop', approval = 'inline' } })
  kgent.run('Change value to 2')
  H.wait_for(function()
    return #approval.list() == 1
  end, 'the approval')
  local sid = pending_session()
  vim.cmd('Kgent cancel')
  local e = H.wait_run_end()
  eq('cancelled', e.status, 'status')
  eq(0, #approval.list(), 'no pending approval')
  local lines = tr_mod.lines(sid)
  truthy(not H.has_line(lines, '**Approve?**'), 'block removed')
  contains(lines, '✗ Edit sample.py · cancelled · prompt withdrawn', 'tool line')
  eq(SAMPLE, H.read_file(ws .. '/sample.py'), 'file on disk')
end)

test(
  'inline approvals: several pending at once (two runs), a countdown, each answered in its own transcript',
  function()
    H.fresh({
      files = { ['sample.py'] = SAMPLE },
      setup = { model = 'tool-loop', approval = 'inline', approval_timeout = 600 },
    })
    kgent.run('first', { new_session = true })
    H.wait_for(function()
      return #approval.list() == 1
    end, 'the first approval')
    kgent.run('second', { new_session = true })
    H.wait_for(function()
      return #approval.list() == 2
    end, 'two approvals pending')
    eq('kgent: waiting for you (2)', kgent.statusline(), 'statusline')
    local p1, p2 = approval.list()[1], approval.list()[2]
    truthy(p1.params.sessionId ~= p2.params.sessionId, 'two sessions')
    local l2 = tr_mod.lines(p2.params.sessionId)
    contains(l2, 'rejected in 600 s if unanswered', 'countdown line')
    H.wait_for(function()
      return H.has_line(tr_mod.lines(p2.params.sessionId), 'rejected in 59')
    end, 'the countdown ticking')
    truthy(not H.has_line(tr_mod.lines(p1.params.sessionId), p2.params.runId), 'nothing of run 2 in run 1')
    -- The second transcript's keys answer the second run's call only.
    local b2 = tr_mod.buf(p2.params.sessionId)
    local w2 = require('kgent.ui').open(false, p2.params.sessionId)
    eq(b2, vim.api.nvim_win_get_buf(w2), 'window shows the second transcript')
    H.press(w2, 'R')
    H.wait_for(function()
      return not approval.pending[p2.id]
    end, 'the second answered')
    truthy(approval.pending[p1.id] ~= nil, 'the first still pending')
    kgent.approve('reject_once') -- the Lua API / <Plug>(kgent-reject): the oldest pending
    H.wait_for(function()
      return not approval.pending[p1.id]
    end, 'the first answered')
    -- Both runs go on to their bash calls; reject those too.
    H.wait_for(function()
      local l = approval.list()
      if #l > 0 then
        kgent.approve('reject_once')
      end
      return #H.of_type('run_end') == 2
    end, 'both run_ends')
    local res = H.of_type('permission_resolved')
    local kinds = {}
    for _, r in ipairs(res) do
      kinds[r.decision] = (kinds[r.decision] or 0) + 1
    end
    eq(1, kinds.reject_always, 'one reject always')
  end
)

test('inline approval timeout: the countdown ends in a reject, the block goes', function()
  H.fresh({
    files = { ['sample.py'] = SAMPLE },
    setup = { model = 'tool-loop', approval = 'inline', approval_timeout = 1.5 },
  })
  kgent.run('Change value to 2')
  H.wait_for(function()
    return #approval.list() == 1
  end, 'the approval')
  local sid = pending_session()
  contains(tr_mod.lines(sid), 'rejected in 2 s if unanswered', 'countdown')
  local e = H.wait_run_end()
  eq('settled', e.status, 'status')
  local lines = tr_mod.lines(sid)
  truthy(not H.has_line(lines, '**Approve?**'), 'blocks removed')
  contains(lines, 'rejected: no answer in time', 'tool line')
end)

test('kill -9 of the daemon: announced at ERROR with the signal, tools marked lost, edited buffer reloaded', function()
  -- A command line no other process on the machine has (another suite may run this test at the same time).
  local sleep = ('sleep 61.%d'):format(vim.fn.getpid())
  local ws = H.fresh({
    files = { ['notes.txt'] = 'original\n' },
    setup = {
      model = H.script({
        { { text = 'Writing.' }, { tool = 'write', args = { path = 'notes.txt', content = 'changed\n' } } },
        { { text = 'Waiting.' }, { tool = 'bash', args = { command = sleep .. '; echo never' } } },
        { { text = 'Done.' } },
      }),
    },
  })
  vim.cmd.edit(ws .. '/notes.txt')
  local src = vim.api.nvim_get_current_buf()
  H.answer_all('allow_once')
  kgent.run('write then wait')
  H.wait_for(function()
    for _, u in ipairs(H.of_type('tool_update')) do
      if u.status == 'in_progress' and u.toolCallId and #H.of_type('tool_call') == 2 then
        return true
      end
    end
  end, 'bash in progress')
  -- The write went into the open buffer; the buffer is saved before the command runs (the command reads the disk).
  H.wait_for(function()
    return H.read_file(ws .. '/notes.txt') == 'changed\n'
  end, 'the buffer saved before the command')
  local run_id = kgent.state.run_id
  local sid = kgent.state.session_id
  local pid = kgent.state.conn.pid
  truthy(pid, 'the daemon pid is known')
  eq('kgent: running 1', kgent.statusline(), 'statusline while running')
  H.wait_for(function()
    return vim.fn.system({ 'pgrep', '-f', sleep }) ~= ''
  end, 'the command running')
  vim.uv.kill(pid, 'sigkill')
  H.wait_for(function()
    return #H.notes_at(vim.log.levels.ERROR) > 0
  end, 'the ERROR notification')
  local errs = H.notes_at(vim.log.levels.ERROR)
  eq(1, #errs, 'one ERROR notification: ' .. vim.inspect(errs))
  contains(errs, 'the daemon was killed by signal 9 (SIGKILL): 1 run lost', 'notification')
  contains(errs, ':Kgent restart', 'restart offered')
  eq(false, kgent.state.runs[run_id].live, 'the run ended')
  local lines = tr_mod.lines(sid)
  contains(lines, sleep .. '; echo never` · lost', 'the bash tool marked lost')
  contains(lines, '**Run ' .. run_id .. ' lost** · the daemon was killed by signal 9 (SIGKILL)', 'transcript')
  eq({ 'changed' }, vim.api.nvim_buf_get_lines(src, 0, -1, false), 'the edited buffer reloaded')
  eq('kgent: daemon died', kgent.statusline(), 'statusline')
  contains(
    vim.split(H.read_file(H.root .. '/kgent.log'), '\n'),
    'ERROR kgent.nvim: the daemon (pid ' .. pid .. ') was killed by signal 9 (SIGKILL)',
    'the log says it'
  )
  -- What the daemon was running went with it (its process group).
  H.wait_for(function()
    return vim.fn.system({ 'pgrep', '-f', sleep }) == ''
  end, 'the command killed too')
  -- :Kgent restart brings it back.
  vim.cmd('Kgent restart')
  H.wait_for(function()
    return kgent.state.conn and kgent.state.conn.ready
  end, 'the restarted daemon')
  eq('kgent: idle', kgent.statusline(), 'statusline after the restart')
end)

test('prewarm: setup() starts the daemon in the background; the log has the INFO lines', function()
  H.fresh({ setup = { log_level = 'INFO' } })
  eq(nil, kgent.state.conn, 'not started synchronously by setup()')
  H.wait_for(function()
    return kgent.state.conn and kgent.state.conn.ready
  end, 'the prewarmed daemon')
  eq('kgent: idle', kgent.statusline(), 'statusline')
  local log = vim.split(H.read_file(H.root .. '/kgent.log'), '\n')
  contains(log, 'INFO kgent.nvim: started the daemon (pid ', 'log')
  contains(log, ') is ready: kgent ', 'log')
  -- The first run uses it: no "starting" note.
  local conn = kgent.state.conn
  kgent.run('Say hello.')
  eq('settled', H.wait_run_end().status, 'status')
  eq(conn, kgent.state.conn, 'the same daemon')
  truthy(not H.has_line(H.transcript(), 'starting the daemon'), 'no starting note')
  -- prewarm = false: nothing until the first command, which says it is starting.
  H.fresh({ setup = { prewarm = false } })
  H.flush()
  eq(nil, kgent.state.conn, 'no daemon')
  eq('', kgent.statusline(), 'statusline: nothing')
  kgent.run('Say hello.')
  contains(H.transcript(), '_starting the daemon…_', 'starting note')
  eq('kgent: starting…', kgent.statusline(), 'statusline while starting')
  eq('settled', H.wait_run_end().status, 'status')
end)

test('the chat: <CR> runs with #buffer, while live <CR> steers, <C-f> queues a follow-up, clearable', function()
  local ws = H.fresh({
    files = { ['util.py'] = 'def f(x):\n    return x * 2\n' },
    setup = { model = H.gate_script(), prewarm = false },
  })
  vim.cmd.edit(ws .. '/util.py')
  local held
  H.stub_select(function(items, _, on_choice)
    local reject = function()
      on_choice(H.item(items, 'reject_once'))
    end
    if held then
      return reject()
    end
    held = reject
  end)
  vim.cmd('Kgent chat')
  local cw = vim.api.nvim_get_current_win()
  local cbuf = vim.api.nvim_get_current_buf()
  eq('kgent://chat', vim.api.nvim_buf_get_name(cbuf), 'chat buffer')
  vim.api.nvim_buf_set_lines(cbuf, 0, -1, false, { 'Explain #buffer', 'in two lines.' })
  H.press(cw, '<CR>')
  H.wait_for(function()
    return #H.of_type('run_start') == 1 and held
  end, 'the run from the chat')
  local start = H.of_type('run_start')[1]
  contains({ start.prompt }, 'Explain #buffer\nin two lines.', 'multi-line prompt')
  contains({ start.prompt }, '<resource uri="' .. vim.uri_from_fname(ws .. '/util.py') .. '">', '#buffer sent')
  eq({ '' }, vim.api.nvim_buf_get_lines(cbuf, 0, -1, false), 'chat cleared')
  -- While the run is live: <C-f> in Insert mode queues a follow-up (shown, clearable), <C-s> steers.
  vim.api.nvim_buf_set_lines(cbuf, 0, -1, false, { 'Then add a test.' })
  H.press(cw, 'A<C-f><Esc>')
  H.wait_for(function()
    return #require('kgent.chat').state.followups == 1
  end, 'the follow-up held by the daemon')
  contains(H.notes, 'follow-up queued for run', 'acknowledged')
  local virt = vim.api.nvim_buf_get_extmarks(cbuf, -1, 0, -1, { details = true })
  local shown = vim.inspect(virt)
  truthy(shown:find('follow-up 1, when the run would end: Then add a test.', 1, true), 'queue shown: ' .. shown)
  vim.cmd('Kgent queue clear')
  H.wait_for(function()
    return #require('kgent.chat').state.followups == 0
  end, 'the daemon dropped it')
  contains(H.notes, 'dropped 1 queued message the run had not read', 'acknowledged')
  -- A steering message the daemon holds is dropped by :Kgent queue clear too (agent/clearQueue).
  vim.api.nvim_buf_set_lines(cbuf, 0, -1, false, { 'Forget this.' })
  H.press(cw, 'A<C-s><Esc>')
  H.wait_for(function()
    return #require('kgent.chat').state.steering == 1
  end, 'the steer held by the daemon')
  vim.cmd('Kgent queue clear')
  H.wait_for(function()
    return #require('kgent.chat').state.steering == 0
  end, 'the daemon dropped it')
  local dropped = 0
  for _, n in ipairs(H.notes) do
    dropped = dropped + (n:find('dropped 1 queued message the run had not read', 1, true) and 1 or 0)
  end
  eq(2, dropped, 'each clear acknowledged')
  vim.api.nvim_buf_set_lines(cbuf, 0, -1, false, { 'Then say bye.' })
  H.press(cw, '<C-f>')
  vim.api.nvim_buf_set_lines(cbuf, 0, -1, false, { 'Use three.' })
  H.press(cw, 'A<C-s><Esc>')
  H.wait_for(function()
    return H.has_line(H.notes, 'steering message queued')
  end, 'the steer acknowledged')
  held()
  -- The follow-up is the daemon's: delivered when the run would settle, and the same run goes on with it.
  H.wait_for(function()
    return #H.of_type('run_end') == 1
  end, 'the run_end')
  eq(1, #H.of_type('run_start'), 'one run: no second run started by the chat')
  local followed = {}
  for _, u in ipairs(H.of_type('user_message')) do
    if u.source == 'follow_up' then
      followed[#followed + 1] = u.text
    end
  end
  eq({ 'Then say bye.' }, followed, 'the follow-up was delivered in the run')
  eq(0, #require('kgent.chat').state.followups, 'nothing left queued')
  local steered = {}
  for _, u in ipairs(H.of_type('user_message')) do
    if u.source == 'steer' then
      steered[#steered + 1] = u.text
    end
  end
  eq({ 'Use three.' }, steered, 'the steering message was delivered, the cleared one never')
end)

test('errors in plugin words: a missing daemon, a daemon that exits at once (one message)', function()
  H.fresh({ setup = { cmd = { '/nonexistent/kgent', 'serve', '--stdio' } } })
  kgent.run('hi')
  local errs = H.notes_at(vim.log.levels.ERROR)
  eq(1, #errs, 'one error: ' .. vim.inspect(errs))
  contains(errs, 'cannot start the daemon: `/nonexistent/kgent` is not an executable', 'message')
  for _, m in ipairs(errs) do
    truthy(not m:find('language server', 1, true) and not m:find('.lua:', 1, true), 'no LSP internals: ' .. m)
  end
  H.fresh({ setup = { cmd = { '/bin/false' }, prewarm = false } })
  kgent.run('hi')
  H.wait_for(function()
    return #H.notes_at(vim.log.levels.ERROR) > 0 and H.has_line(H.transcript(), 'could not start the run')
  end, 'the failure')
  H.flush()
  errs = H.notes_at(vim.log.levels.ERROR)
  eq(1, #errs, 'one error: ' .. vim.inspect(errs))
  contains(errs, 'the daemon exited with code 1 before it answered initialize', 'message')
end)

test('conventions: highlight groups, <Plug> mappings, :checkhealth sandbox and version', function()
  H.fresh({})
  for name, link in pairs({
    KgentUser = 'Identifier',
    KgentTool = 'Function',
    KgentApproval = 'DiagnosticWarn',
    KgentHeader = 'Title',
    KgentNote = 'Comment',
    KgentLost = 'DiagnosticError',
  }) do
    eq(link, vim.api.nvim_get_hl(0, { name = name }).link, name)
  end
  for _, plug in ipairs({
    '<Plug>(kgent-chat)',
    '<Plug>(kgent-cancel)',
    '<Plug>(kgent-open)',
    '<Plug>(kgent-allow)',
    '<Plug>(kgent-reject)',
    '<Plug>(kgent-transcripts)',
  }) do
    truthy(vim.fn.maparg(plug, 'n') ~= '', 'mapping ' .. plug)
  end
  truthy(vim.fn.maparg('<Plug>(kgent-chat)', 'x') ~= '', 'visual chat mapping')
  local lines = health_lines()
  truthy(
    vim.tbl_contains(lines, 'kgent: shell sandbox') or table.concat(lines, '\n'):find('kgent: shell sandbox', 1, true),
    'checkhealth sandbox section'
  )
  contains(lines, 'OK daemon answers initialize: kgent ', 'checkhealth version')
end)

test('run summary: all input tokens, the cached share and the cost when the model has a price', function()
  local prices = vim.fn.tempname() .. '.json'
  H.write_file(
    prices,
    vim.json.encode({
      currency = 'USD',
      models = { hello = { input = 1000000, output = 2000000, cacheRead = 100000, cacheWrite = 1250000 } },
    })
  )
  H.fresh({ setup = { env = { KGENT_PRICES = prices } } })
  vim.cmd('Kgent run say hello')
  local e = H.wait_run_end()
  eq('settled', e.status, 'status')
  local u = e.usage
  truthy(type(u.cost) == 'table' and u.cost.currency == 'USD' and u.cost.amount > 0, 'run_end carries a cost')
  local input = u.inputTokens + u.cacheReadTokens + u.cacheWriteTokens
  local line = ('%d in / %d out tokens · ≈ $%.4f'):format(input, u.outputTokens, u.cost.amount)
  if u.cacheReadTokens > 0 then
    line = ('%d in (%d cached) / %d out tokens · ≈ $%.4f'):format(
      input,
      u.cacheReadTokens,
      u.outputTokens,
      u.cost.amount
    )
  end
  contains(H.transcript(), line, 'transcript summary')
  -- and how full the context was after the last call, in the server's words (the scripted provider's window:
  -- 32768 tokens; one model call: its whole prompt and its answer)
  local used = input + u.outputTokens
  local share = math.floor(100 * used / 32768 + 0.5)
  local shown = used >= 10000 and ('%dk'):format(math.floor(used / 1000 + 0.5))
    or used >= 1000 and ('%.1fk'):format(used / 1000)
    or tostring(used)
  contains(
    H.transcript(),
    line .. (' · context %s of 33k tokens (%d%%)'):format(shown, share),
    'the context after the run'
  )
  eq(
    'context 9.8k of 128k tokens (8%)',
    require('kgent.render').fmt_context({ text = 'context 9.8k of 128k tokens (8%)' }),
    'as sent'
  )
  eq(nil, require('kgent.render').fmt_context({ tokens = 2100, window = 32768 }), 'no text: nothing computed')
end)

dofile(here .. '/test_buffers.lua')(H)
dofile(here .. '/test_diagnostics.lua')(H)
dofile(here .. '/test_daily.lua')(H)
dofile(here .. '/test_rules.lua')(H)
dofile(here .. '/test_images.lua')(H)
dofile(here .. '/test_rewind.lua')(H)
dofile(here .. '/test_slash.lua')(H)
dofile(here .. '/test_faithful.lua')(H)
dofile(here .. '/test_stream.lua')(H)
test("trust_project_extensions: the project's own extension runs (its tool answers)", function()
  local script = vim.fn.tempname() .. '.json'
  H.write_file(
    script,
    vim.json.encode({
      turns = {
        { { tool = 'project_calc', args = { expression = '2+3' } } },
        { { text = 'five' } },
      },
    })
  )
  local ws = H.fresh({
    files = {
      ['.kgent/config.toml'] = '[extensions]\nload = [".kgent/calc.py"]\n',
      ['.kgent/calc.py'] = 'from kgent.tools import CalculatorTool\n'
        .. 'def register(api):\n    t = CalculatorTool(); t.name = "project_calc"; api.tool(t)\n',
    },
    setup = { model = script, trust_project_extensions = true, env = { KGENT_CONFIG_DIR = vim.fn.tempname() } },
  })
  truthy(ws ~= nil, 'workspace')
  vim.cmd('Kgent run add')
  local e = H.wait_run_end()
  eq('settled', e.status, 'status')
  local outputs = {}
  for _, u in ipairs(H.of_type('tool_update')) do
    if u.status ~= 'in_progress' then
      outputs[#outputs + 1] = u.output
    end
  end
  eq({ '5' }, outputs, 'the extension tool answered')
end)

test('todo_write: the plan is one block of the transcript, rewritten in place as it changes', function()
  H.fresh({ files = { ['sample.py'] = SAMPLE }, setup = { model = 'plan' } })
  vim.cmd('Kgent run What does sample.py print?')
  local e = H.wait_run_end()
  eq('settled', e.status, 'status')
  eq(0, #H.prompts, 'planning is never asked')
  local tr = H.transcript()
  local heads, at = 0, nil
  for i, l in ipairs(tr) do
    if vim.startswith(l, '**Plan**') then
      heads, at = heads + 1, i
    end
  end
  eq(1, heads, 'one plan block, rewritten in place')
  eq(
    { '**Plan** · 2/2 done', '- [x] Read sample.py (high)', '- [x] Explain what it prints' },
    { tr[at], tr[at + 1], tr[at + 2] },
    'the latest plan'
  )
  contains(tr, 'sample.py sets value = 1 and prints it, so it prints 1.', 'the answer after it')
  contains(tr, '✓ Update the plan (2 items) · completed', 'the todo_write calls are tool lines')
  truthy(not H.has_line(tr, 'Plan updated: 2 item(s), 2 completed, 0 in progress.'), 'their results are the block')
  eq('DiagnosticInfo', vim.api.nvim_get_hl(0, { name = 'KgentPlan' }).link, 'KgentPlan')
end)

--- The run_end of the run :Kgent run started (a sub-agent's run ends first: its events carry parentRunId).
local function wait_top_end()
  H.wait_for(function()
    for _, p in ipairs(H.events) do
      if p.event.type == 'run_end' and not p.parentRunId then
        return true
      end
    end
  end, 'the run_end of the top-level run')
  for _, p in ipairs(H.events) do
    if p.event.type == 'run_end' and not p.parentRunId then
      return p.event
    end
  end
end

test(
  "task: a sub-agent's calls are labelled in the transcript, its prompt names it; cancel stops it mid-command",
  function()
    H.fresh({ files = { ['sample.py'] = SAMPLE }, setup = { model = 'task' } })
    H.answer_all('allow_once')
    vim.cmd('Kgent run What does sample.py print?')
    local e = wait_top_end()
    eq('settled', e.status, 'status')
    eq(1, #H.prompts, "one prompt: the sub-agent's command")
    contains(
      { H.prompts[1].opts.prompt },
      'Kgent sub-agent "Check sample.py": Run `python3 sample.py`',
      'prompt names it'
    )
    local tr = H.transcript()
    contains(tr, '↳ **Sub-agent: Check sample.py** started', 'its start')
    contains(tr, '✓ ↳ Check sample.py: Read sample.py · completed', 'its read, labelled')
    contains(tr, '↳ Check sample.py: Run `python3 sample.py`', 'its command, labelled')
    contains(tr, '↳ **Sub-agent: Check sample.py** settled · 3 turns', 'its end')
    contains(tr, 'The sub-agent ran sample.py: it prints 1.', "the parent's answer")
    local summaries = 0
    for _, l in ipairs(tr) do
      if l:find('**Run settled**', 1, true) then
        summaries = summaries + 1
      end
    end
    eq(1, summaries, 'one run summary: the sub-run is not a run of the transcript')

    -- :Kgent cancel while the sub-agent's command runs: the run ends cancelled, the command's line with it
    local script = vim.fn.tempname() .. '-long-task.json'
    H.write_file(
      script,
      vim.json.encode({
        turns = {
          { { tool = 'task', args = { description = 'Wait', prompt = 'wait', tools = { 'bash' } } } },
          { { text = 'never' } },
        },
        prompts = {
          wait = { { { tool = 'bash', args = { command = 'echo started; sleep 60' } } }, { { text = 'slept' } } },
        },
      })
    )
    H.events = {}
    kgent.run('Wait.', { model = script, mode = 'full' })
    H.wait_for(function()
      for _, p in ipairs(H.events) do
        local ev = p.event
        if p.parentRunId and ev.type == 'tool_update' and type(ev.output) == 'string' and ev.output:find('started') then
          return true
        end
      end
    end, "the sub-agent's command to run")
    vim.cmd('Kgent cancel')
    local e2 = wait_top_end()
    eq('cancelled', e2.status, 'cancelled')
    contains(H.transcript(), '↳ **Sub-agent: Wait** cancelled · 1 turn', 'the sub-agent ended cancelled')
    eq(nil, kgent.state.run_id, 'no current run')
  end
)

test(
  'task side by side: three sub-agents ask at once, each inline approval names its sub-agent, each answer settles its own',
  function()
    H.fresh({ setup = { approval = 'inline' } })
    -- one model turn of three task calls (t0, t1, t2), each sub-agent running one asked command, then answering
    local names = { 'Alpha', 'Beta', 'Gamma' }
    local function command(n)
      return ('python3 -c \'print("%s")\''):format(n)
    end
    local calls, prompts = {}, {}
    for i, n in ipairs(names) do
      calls[i] =
        { tool = 'task', id = 't' .. (i - 1), args = { description = n, prompt = 'job ' .. n, tools = { 'bash' } } }
      prompts['job ' .. n] = { { { tool = 'bash', args = { command = command(n) } } }, { { text = n .. ' is done.' } } }
    end
    local script = vim.fn.tempname() .. '-three.json'
    H.write_file(
      script,
      vim.json.encode({ turns = { calls, { { text = 'All three are done.' } } }, prompts = prompts })
    )
    kgent.run('three jobs', { model = script })
    -- three prompts pending together: only sub-agents running side by side can ask at once (none is answered yet)
    H.wait_for(function()
      return #approval.list() == 3
    end, 'three approvals pending at once')
    eq('kgent: waiting for you (3)', kgent.statusline(), 'statusline')
    local sub_of = {} -- task call id -> its sub-run's run_start params
    local top
    for _, p in ipairs(H.events) do
      if p.event.type == 'run_start' and p.parentRunId then
        sub_of[p.event.parentToolCallId] = p
      elseif p.event.type == 'run_start' then
        top = p.runId
      end
    end
    local by_agent = {}
    for _, pr in ipairs(approval.list()) do
      eq(top, pr.params.parentRunId, 'each prompt names the run its sub-agent belongs to')
      by_agent[pr.params.agent] = pr
    end
    local agents = vim.tbl_keys(by_agent)
    table.sort(agents)
    eq(names, agents, 'one prompt per sub-agent')
    for _, n in ipairs(names) do -- and each notification says whose call it is
      contains(
        H.notes,
        ('kgent: approval needed: sub-agent "%s": Run `%s` (a allows'):format(n, command(n)),
        n .. "'s notification"
      )
    end
    -- the second task call's sub-agent asks as Beta, from its own run
    local beta = by_agent.Beta
    eq('Beta', sub_of.t1.event.agent, "t1's sub-agent")
    eq(sub_of.t1.runId, beta.params.runId, "Beta's prompt comes from t1's sub-run")
    eq(command('Beta'), beta.params.toolCall.command, 'its command')
    -- each block in the transcript names its sub-agent, after that sub-agent's own call (other sub-agents' lines
    -- may come between: they go on meanwhile)
    local sid = beta.params.sessionId
    local lines = tr_mod.lines(sid)
    for _, n in ipairs(names) do
      local first = tr_mod.block_rows(by_agent[n].inline.block)
      local header = ('**Approve?** (sub-agent "%s") Run `%s`  [high · shell · workspace]'):format(n, command(n))
      eq(header, lines[first + 1], n .. "'s block")
      local call_row
      for i, l in ipairs(lines) do
        if l:find(('↳ %s: Run `%s` · pending · awaiting approval'):format(n, command(n)), 1, true) then
          call_row = i
        end
      end
      truthy(call_row and call_row < first + 1, n .. "'s call before its block:\n" .. table.concat(lines, '\n'))
    end
    -- the keys with the cursor in Beta's block answer Beta's call only
    local win = require('kgent.ui').open(false, sid)
    local first = tr_mod.block_rows(beta.inline.block)
    vim.api.nvim_win_set_cursor(win, { first + 2, 0 })
    H.press(win, 'a')
    H.wait_for(function()
      return not approval.pending[beta.id]
    end, "Beta's answer")
    truthy(approval.pending[by_agent.Alpha.id] and approval.pending[by_agent.Gamma.id], 'the other two still pending')
    H.wait_for(function()
      return H.has_line(tr_mod.lines(sid), ('✓ ↳ Beta: Run `%s` · completed'):format(command('Beta')))
    end, "Beta's command to run while the others wait")
    -- Beta's sub-run ends while Alpha's and Gamma's wait for their answers: their events interleave with Beta's
    local function index_of(run, ty, from)
      for i = from or 1, #H.events do
        if H.events[i].runId == run and (ty == nil or H.events[i].event.type == ty) then
          return i
        end
      end
    end
    H.wait_for(function()
      return index_of(beta.params.runId, 'run_end') ~= nil
    end, "Beta's sub-run to end")
    local beta_end = index_of(beta.params.runId, 'run_end')
    truthy(approval.pending[by_agent.Alpha.id] and approval.pending[by_agent.Gamma.id], 'still waiting')
    truthy(index_of(by_agent.Alpha.params.runId) < beta_end, "Alpha's events before Beta's end")
    -- then the others (the oldest first: the Lua API's target)
    kgent.approve('allow_once')
    kgent.approve('allow_once')
    local e = wait_top_end()
    eq('settled', e.status, 'status')
    eq('All three are done.', e.text, 'the answer')
    truthy(index_of(by_agent.Alpha.params.runId, 'run_end', beta_end), "and Alpha's after it: interleaved")
    eq(0, #approval.list(), 'nothing pending')
    lines = tr_mod.lines(sid)
    truthy(not H.has_line(lines, '**Approve?**'), 'every block gone')
    for _, n in ipairs(names) do
      contains(
        lines,
        ('✓ ↳ %s: Run `%s` · completed · allowed once'):format(n, command(n)),
        n .. "'s command ran"
      )
      contains(lines, ('↳ **Sub-agent: %s** settled · 2 turns'):format(n), n .. ' settled')
    end
  end
)

test(':Kgent instructions lists the AGENTS.md files and skills the session loaded and opens one', function()
  local ws = H.fresh({
    files = {
      ['AGENTS.md'] = 'ROOT: run the tests\n',
      ['src/AGENTS.md'] = 'SRC: pure functions\n',
      ['src/app.py'] = 'def f(x):\n    return x\n',
      ['.kgent/skills/release/SKILL.md'] = '---\nname: release\ndescription: Cut a release.\n---\n',
    },
    setup = { model = 'nested-instructions' },
  })
  vim.cmd('Kgent run Check src/app.py.')
  eq('settled', H.wait_run_end().status, 'status')
  local labels
  H.stub_select(function(items, o, on_choice)
    labels = vim.tbl_map(o.format_item, items)
    eq('kgent.instructions', o.kind, 'select kind')
    on_choice(items[2])
  end)
  vim.cmd('Kgent instructions')
  H.wait_for(function()
    return vim.api.nvim_buf_get_name(0) == ws .. '/src/AGENTS.md'
  end, 'src/AGENTS.md opened')
  eq(3, #labels, 'two files and a skill')
  contains({ labels[1] }, ws .. '/AGENTS.md  (project root)', 'the root first')
  contains({ labels[2] }, ws .. '/src/AGENTS.md  (directory)', 'then the directory')
  contains({ labels[3] }, 'skill release: Cut a release.', 'the skill')
  eq({ 'SRC: pure functions' }, vim.api.nvim_buf_get_lines(0, 0, -1, false), 'its text')
end)

H.run_all()
