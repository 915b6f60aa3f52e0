-- What a user hits in the first hour (issue 29), in real headless Neovim against the real daemon (loaded by
-- test_kgent.lua): the version check before setup(), cancel with follow-ups queued, the queue in the chat, one
-- "queued —" line, one countdown, :Kgent mode / model / fork, branch marks, the full history on resume, the
-- transcripts' labels, the saved-buffers line, the chat's context variables and the <Plug> mappings.
return function(H)
  local kgent = require('kgent')
  local approval = require('kgent.approval')
  local tr_mod = require('kgent.transcript')
  local test, eq, truthy, contains = H.test, H.eq, H.truthy, H.contains

  local function count(lines, needle)
    local n = 0
    for _, l in ipairs(lines) do
      if l:find(needle, 1, true) then
        n = n + 1
      end
    end
    return n
  end

  test('Neovim older than 0.10: require("kgent").setup{} says it needs 0.10 instead of a Lua error', function()
    -- Neovim 0.7 (Debian 12's) cannot run here (no `-l`); its two differences that matter are faked in the real
    -- 0.11: has('nvim-0.10') is 0 and stdpath('log') is an error ('"log" is not a valid stdpath').
    local saved = {}
    for name, mod in pairs(package.loaded) do
      if name == 'kgent' or name:match('^kgent%.') then
        saved[name] = mod
      end
    end
    for name in pairs(saved) do
      package.loaded[name] = nil
    end
    local real_has, real_stdpath, real_err = vim.fn.has, vim.fn.stdpath, vim.api.nvim_err_writeln
    local errs = {}
    vim.fn.has = function(feature)
      if feature == 'nvim-0.10' then
        return 0
      end
      return real_has(feature)
    end
    vim.fn.stdpath = function(what)
      if what == 'log' then
        error('E6100: "log" is not a valid stdpath')
      end
      return real_stdpath(what)
    end
    vim.api.nvim_err_writeln = function(msg)
      errs[#errs + 1] = msg
    end
    local ok, err = pcall(function()
      local k = require('kgent')
      k.setup({ provider = 'scripted' })
      k.run('hello')
    end)
    vim.fn.has, vim.fn.stdpath, vim.api.nvim_err_writeln = real_has, real_stdpath, real_err
    for name in pairs(package.loaded) do
      if name == 'kgent' or name:match('^kgent%.') then
        package.loaded[name] = nil
      end
    end
    for name, mod in pairs(saved) do
      package.loaded[name] = mod
    end
    truthy(ok, 'no Lua error: ' .. tostring(err))
    eq({ 'kgent.nvim needs Neovim 0.10 or later' }, errs, 'the message, once')
  end)

  test(
    'prewarm warms: setup() has the daemon answer a first request before any run (it loads its store then)',
    function()
      H.fresh({ setup = { log_level = 'INFO' } })
      H.wait_for(function()
        return kgent.state.conn and kgent.state.conn.warm
      end, 'the warm daemon')
      contains(vim.split(H.read_file(H.root .. '/kgent.log'), '\n'), 'INFO kgent.nvim: the daemon is warm (', 'log')
      eq(0, #H.events, 'no run')
    end
  )

  test('approval countdown: one line, ticking in place', function()
    H.fresh({
      files = { ['sample.py'] = 'value = 1\n' },
      setup = { model = 'tool-loop', approval = 'inline', approval_timeout = 600 },
    })
    kgent.run('Change value to 2')
    H.wait_for(function()
      return #approval.list() == 1
    end, 'the approval')
    local sid = approval.list()[1].params.sessionId
    H.wait_for(function()
      return H.has_line(tr_mod.lines(sid), 'rejected in 59')
    end, 'the countdown ticking')
    eq(1, count(tr_mod.lines(sid), 'if unanswered'), 'countdown lines in:\n' .. table.concat(tr_mod.lines(sid), '\n'))
    vim.cmd('Kgent cancel')
    eq('cancelled', H.wait_run_end().status, 'cancelled')
  end)

  test(':Kgent queue bogus is an error, not :Kgent queue', function()
    H.fresh({ setup = { prewarm = false } })
    vim.cmd('Kgent queue bogus')
    contains(H.notes_at(vim.log.levels.ERROR), ':Kgent queue takes nothing or "clear", not "bogus"', 'error')
    truthy(not H.has_line(H.notes, 'no follow-up is queued'), 'not taken as :Kgent queue')
    eq({ 'clear' }, vim.fn.getcompletion('Kgent queue ', 'cmdline'), 'completion')
  end)

  local function hold_first_approval()
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
    return function()
      return held
    end
  end

  test('chat: queued follow-ups are in view; one :Kgent cancel stops the run and starts none of them', function()
    H.fresh({ setup = { model = H.gate_script(), prewarm = false } })
    local held = hold_first_approval()
    local chat = require('kgent.chat')
    vim.cmd('Kgent chat')
    local cw = vim.api.nvim_get_current_win()
    local cbuf = vim.api.nvim_get_current_buf()
    chat.send('Start.')
    H.wait_for(function()
      return #H.of_type('run_start') == 1 and held()
    end, 'the run, held at its approval')
    chat.send('Then one.', 'follow_up')
    chat.send('Then two.', 'follow_up')
    -- the queue is the daemon's (agent/followUp): the chat lists what its queue_update says
    H.wait_for(function()
      return #chat.state.followups == 2
    end, 'two follow-ups in the daemon')
    eq({ 'Then one.', 'Then two.' }, chat.state.followups, 'as the daemon holds them')
    -- The queue is drawn as virtual lines above line 1: the window makes room for all of them.
    local view = vim.api.nvim_win_call(cw, vim.fn.winsaveview)
    eq(3, view.topfill, 'the two follow-ups and the hint line are in view')
    vim.cmd('Kgent cancel')
    H.wait_for(function()
      return #H.of_type('run_end') == 1
    end, 'the run_end')
    eq('cancelled', H.of_type('run_end')[1].status, 'cancelled')
    H.flush()
    H.flush()
    eq(0, kgent.state.starting or 0, 'no follow-up run is starting')
    eq(1, #H.of_type('run_start'), 'one run only')
    eq(0, #chat.state.followups, 'queue empty')
    eq({ 'Then one.', '', 'Then two.' }, vim.api.nvim_buf_get_lines(cbuf, 0, -1, false), 'back in the chat')
    contains(H.notes, '2 queued follow-ups back in the chat, not sent', 'said')
    eq(0, vim.api.nvim_win_call(cw, vim.fn.winsaveview).topfill, 'no queue lines left')
  end)

  test('follow-ups queued in the daemon: one "queued —" line, rewritten in place', function()
    H.fresh({ setup = { model = H.gate_script(), prewarm = false } })
    local held = hold_first_approval()
    kgent.run('Start.')
    H.wait_for(function()
      return held()
    end, 'the approval')
    vim.cmd('Kgent followup one')
    H.wait_for(function()
      return H.has_line(H.notes, 'follow-up queued')
    end, 'the first follow-up')
    vim.cmd('Kgent followup two')
    H.wait_for(function()
      for _, q in ipairs(H.of_type('queue_update')) do
        if #(q.followUp or {}) == 2 then
          return true
        end
      end
    end, 'two follow-ups in the daemon')
    H.flush()
    local lines = H.transcript()
    eq(1, count(lines, 'queued —'), 'one queued line in:\n' .. table.concat(lines, '\n'))
    contains(lines, '_queued — follow-up: one; follow-up: two_', 'both in it')
    held()()
    H.wait_for(function()
      return #H.of_type('run_end') == 1
    end, 'the run_end')
    eq(0, count(H.transcript(), 'queued —'), 'delivered: the line goes')
  end)

  test(':Kgent mode and :Kgent model choose for the next runs (a typed model id too), no restart', function()
    H.fresh({ setup = { prewarm = false } })
    vim.cmd('Kgent mode auto')
    vim.cmd('Kgent model streamed-run')
    kgent.run('Say hello.')
    local e = H.wait_run_end()
    eq('settled', e.status, 'status')
    local s = H.of_type('run_start')[1]
    eq({ 'auto', 'scripted', 'streamed-run' }, { s.mode, s.provider, s.model }, 'run_start')
    -- The picker: the daemon's known models, and an item to type any id.
    local real_input = vim.ui.input
    H.stub_select(function(items, o, on_choice)
      local labels = vim.tbl_map(o.format_item, items)
      contains(labels, 'scripted/streamed-run  (current)', 'current model marked')
      on_choice(items[#items])
    end)
    vim.ui.input = function(_, on_confirm)
      on_confirm('hello')
    end
    vim.cmd('Kgent model')
    H.wait_for(function()
      return kgent.state.model == 'hello'
    end, 'the typed model')
    vim.ui.input = real_input
    H.stub_select(function(items, _, on_choice)
      on_choice(items[1]) -- plan
    end)
    vim.cmd('Kgent mode')
    H.wait_for(function()
      return kgent.state.mode == 'plan'
    end, 'the picked mode')
    H.events = {}
    kgent.run('Again.')
    eq('settled', H.wait_run_end().status, 'status')
    s = H.of_type('run_start')[1]
    eq({ 'plan', 'hello' }, { s.mode, s.model }, 'second run_start')
    vim.cmd('Kgent mode bogus')
    contains(H.notes_at(vim.log.levels.ERROR), 'unknown mode "bogus"', 'error')
    eq('plan', kgent.state.mode, 'unchanged')
    contains(vim.fn.getcompletion('Kgent model scripted/str', 'cmdline'), 'scripted/streamed-run', 'completion')
  end)

  test(':Kgent fork: pick a message, the session goes on from before it, branch marked live and on resume', function()
    H.fresh({ setup = { prewarm = false } })
    kgent.run('first question')
    H.wait_run_end()
    H.events = {}
    kgent.run('second question')
    local e = H.wait_run_end()
    local sid = e.sessionId
    local labels
    H.stub_select(function(items, o, on_choice)
      labels = vim.tbl_map(o.format_item, items)
      on_choice(items[1]) -- the newest message first
    end)
    vim.cmd('Kgent fork')
    H.wait_for(function()
      return H.has_line(H.notes, 'forked session')
    end, 'the fork')
    truthy(labels[1]:find('^2%. second question'), 'newest first: ' .. vim.inspect(labels))
    truthy(labels[2]:find('^1%. first question'), 'then the first: ' .. vim.inspect(labels))
    local chat = require('kgent.chat')
    eq({ 'second question' }, vim.api.nvim_buf_get_lines(chat.state.buf, 0, -1, false), 'the message to edit')
    contains(tr_mod.lines(sid), '─── ⑂ new branch before message 2: second question ───', 'branch mark')
    vim.api.nvim_buf_set_lines(chat.state.buf, 0, -1, false, { 'second question, edited' })
    H.events = {}
    chat.send()
    eq('settled', H.wait_run_end().status, 'the edited run')
    local serr, s = kgent.state.conn:request_sync('agent/session', { sessionId = sid }, H.WAIT_MS)
    eq(nil, serr, 'agent/session')
    local texts = {}
    local by_id = {}
    for _, en in ipairs(s.entries) do
      by_id[en.id] = en
    end
    for _, id in ipairs(s.branch) do
      local en = by_id[id]
      if en.type == 'message' and en.message.role == 'user' then
        texts[#texts + 1] = en.message.text
      end
    end
    eq({ 'first question', 'second question, edited' }, texts, 'the branch the model sees')
    -- Resumed in a fresh Neovim state: the history marks where the other branch leaves.
    require('kgent.ui').reset()
    local done
    kgent.resume_session(sid, function(err)
      done = err or true
    end)
    H.wait_for(function()
      return done
    end, 'the resume')
    local lines = tr_mod.lines(sid)
    contains(lines, '─── ⑂ branch (2 branches leave here; :Kgent fork) ───', 'branch mark on resume')
    contains(lines, '**You:** second question, edited', 'the active branch')
    truthy(not vim.tbl_contains(lines, '**You:** second question'), 'not the old one')
  end)

  test('resume shows the whole history: each call with its path or command, not "✓ read"', function()
    local ws = H.fresh({
      files = { ['f0.txt'] = 'zero\n' },
      setup = {
        prewarm = false,
        mode = 'full',
        model = H.script({
          {
            { text = 'Looking.' },
            { tool = 'read', args = { path = 'f0.txt' } },
            { tool = 'bash', args = { command = 'echo hi && false' } },
          },
          { { text = 'Done: zero.' } },
        }),
      },
    })
    kgent.run('Read f0 and run a command.')
    local e = H.wait_run_end()
    eq('settled', e.status, 'status')
    require('kgent.ui').reset()
    kgent.state.session_id = nil
    local done
    kgent.resume_session(e.sessionId, function(err)
      done = err or true
    end)
    H.wait_for(function()
      return done
    end, 'the resume')
    local lines = tr_mod.lines(e.sessionId)
    contains(lines, '**You:** Read f0 and run a command.', 'prompt')
    contains(lines, '- ✓ read f0.txt · completed', 'the read with its path')
    contains(lines, '- ✗ bash: `echo hi && false` · failed', 'the command, failed')
    contains(lines, 'Done: zero.', 'the answer')
    truthy(ws, 'workspace')
  end)

  test(":Kgent transcripts labels this Neovim's sessions as the past ones: time, entries, title", function()
    H.fresh({ setup = { prewarm = false } })
    kgent.run('A question with a title.')
    H.wait_run_end()
    local labels
    H.stub_select(function(items, o, on_choice)
      labels = vim.tbl_map(o.format_item, items)
      on_choice(nil)
    end)
    local done
    require('kgent.sessions').pick_transcript(function()
      done = true
    end)
    H.wait_for(function()
      return done
    end, 'the picker')
    eq(1, #labels, 'one session: ' .. vim.inspect(labels))
    truthy(
      labels[1]:find('^%[open%] %x+  %d%d%d%d%-%d%d%-%d%d .*entries%)  A question with a title%.$'),
      'label: ' .. labels[1]
    )
  end)

  test("before a shell command: the transcript names each buffer saved (the user's unsaved lines with it)", function()
    local ws = H.fresh({ files = { ['notes.txt'] = 'on disk\n' }, setup = { model = 'buffer-edit' } })
    vim.cmd.edit(ws .. '/notes.txt')
    local buf = vim.api.nvim_get_current_buf()
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, { 'note: unsaved in the editor' })
    H.answer_all('allow_once')
    kgent.run('edit and check')
    local e = H.wait_run_end()
    eq('settled', e.status, 'status')
    contains(
      tr_mod.lines(e.sessionId),
      '_saved before a command (with any unsaved lines of yours in them): notes.txt_',
      'the line'
    )
  end)

  test('chat context: #diagnostics, #viewport, #symbol (tree-sitter without LSP), offered by completion', function()
    local src = table.concat({
      'local M = {}',
      '',
      'function M.double(x)',
      '  local y = x * 2',
      '  return y',
      'end',
      '',
      'function M.triple(x)',
      '  return x * 3',
      'end',
      '',
      'return M',
      '',
    }, '\n')
    local ws = H.fresh({ files = { ['util.lua'] = src }, setup = { prewarm = false } })
    vim.cmd.edit(ws .. '/util.lua')
    local buf = vim.api.nvim_get_current_buf()
    vim.bo[buf].filetype = 'lua'
    vim.api.nvim_win_set_cursor(0, { 4, 4 })
    local dns = vim.api.nvim_create_namespace('kgent-test-diag')
    vim.diagnostic.set(
      dns,
      buf,
      { { lnum = 3, col = 8, message = 'y is unused', severity = vim.diagnostic.severity.WARN, source = 'luals' } }
    )
    local chat = require('kgent.chat')
    vim.cmd('Kgent chat')
    local blocks, err = chat.blocks('Fix #diagnostics in #symbol; see #viewport')
    eq(nil, err, 'no error')
    local uri = vim.uri_from_fname(ws .. '/util.lua')
    eq(4, #blocks, 'text + three resources')
    eq(uri .. '#diagnostics', blocks[2].resource.uri, 'diagnostics uri')
    eq('4:9 warning [luals] y is unused', blocks[2].resource.text, 'diagnostics')
    truthy(blocks[3].resource.uri:find(uri .. '#L1-L', 1, true), 'viewport: ' .. blocks[3].resource.uri)
    contains(vim.split(blocks[3].resource.text, '\n'), 'return M', 'viewport text')
    eq(uri .. '#L3-L6', blocks[4].resource.uri, 'symbol range')
    eq('function M.double(x)\n  local y = x * 2\n  return y\nend', blocks[4].resource.text, 'symbol text')
    -- Completion in the chat buffer: its omnifunc, and `#` opening the menu.
    local cbuf = chat.state.buf
    eq("v:lua.require'kgent.chat'.omnifunc", vim.bo[cbuf].omnifunc, 'omnifunc')
    vim.api.nvim_buf_set_lines(cbuf, 0, -1, false, { 'explain #di' })
    vim.api.nvim_win_set_cursor(0, { 1, 11 })
    eq(8, chat.omnifunc(1, ''), 'start column')
    eq(
      { '#diagnostics' },
      vim.tbl_map(function(i)
        return i.word
      end, chat.omnifunc(0, '#di')),
      'matches'
    )
    eq(6, #chat.omnifunc(0, '#'), 'all six')
    local cwd = vim.fn.getcwd()
    vim.cmd.cd(ws)
    local files = vim.tbl_map(function(i)
      return i.word
    end, chat.omnifunc(0, '#file:ut'))
    vim.cmd.cd(cwd)
    contains(files, '#file:util.lua', 'file names (relative to the current directory, as #file: is)')
    local hash = vim.fn.maparg('#', 'i', false, true)
    truthy(hash.expr == 1 and hash.buffer == 1, '# is mapped in the chat')
    vim.api.nvim_buf_set_lines(cbuf, 0, -1, false, { '' })
    vim.api.nvim_win_set_cursor(0, { 1, 0 })
    eq('#<C-x><C-o>', hash.callback(), '# opens the menu (the mapping replaces the key codes)')
    -- Sent for real: the daemon renders the resources into the prompt.
    vim.api.nvim_buf_set_lines(cbuf, 0, -1, false, { 'Look at #symbol' })
    chat.send()
    eq('settled', H.wait_run_end().status, 'status')
    contains({ H.of_type('run_start')[1].prompt }, '<resource uri="' .. uri .. '#L3-L6">', 'sent')
  end)

  test('chat context: #symbol from a real LSP server (textDocument/documentSymbol), the innermost symbol', function()
    local plan = table.concat({
      'section Intro',
      '  a first line',
      '',
      'section Work',
      '  item Alpha',
      '    detail one',
      '  item Beta',
      '    detail two',
      '    detail three',
      '',
      'section End',
      '  done',
      '',
    }, '\n')
    local ws = H.fresh({ files = { ['work.plan'] = plan }, setup = { prewarm = false } })
    vim.cmd.edit(ws .. '/work.plan')
    local buf = vim.api.nvim_get_current_buf()
    vim.bo[buf].filetype = 'kgentplan' -- no tree-sitter parser knows it: only the server can answer
    vim.api.nvim_win_set_cursor(0, { 8, 6 }) -- "    detail two": in item Beta, in section Work
    local chat = require('kgent.chat')
    vim.cmd('Kgent chat')
    local _, before = chat.blocks('Look at #symbol')
    contains({ before }, 'no LSP server gives document symbols', 'without the server')
    local tests_dir = vim.fs.dirname(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p'))
    local python = vim.fs.dirname(H.kgent_bin) .. '/python'
    local id = vim.lsp.start(
      { name = 'kgent-test-symbols', cmd = { python, tests_dir .. '/lsp_symbols.py' }, root_dir = ws },
      { bufnr = buf }
    )
    truthy(id, 'the client started')
    H.wait_for(function()
      return #vim.lsp.get_clients({ bufnr = buf, method = 'textDocument/documentSymbol' }) == 1
    end, 'the server attached, offering document symbols')
    local blocks, err = chat.blocks('Look at #symbol')
    eq(nil, err, 'no error')
    local uri = vim.uri_from_fname(ws .. '/work.plan')
    eq(2, #blocks, 'text + the symbol')
    eq(uri .. '#L7-L9', blocks[2].resource.uri, 'the innermost symbol (item Beta), from the server')
    eq('  item Beta\n    detail two\n    detail three', blocks[2].resource.text, 'symbol text')
    -- The server reads the buffer as Neovim sent it: an unsaved line changes the symbol's range.
    vim.api.nvim_buf_set_lines(buf, 8, 8, false, { '    detail unsaved' })
    blocks, err = chat.blocks('Look at #symbol')
    eq(nil, err, 'no error after the edit')
    eq(uri .. '#L7-L10', blocks[2].resource.uri, 'the range after the unsaved edit')
    -- Sent for real: the daemon renders the resource into the prompt.
    vim.api.nvim_buf_set_lines(chat.state.buf, 0, -1, false, { 'Look at #symbol' })
    chat.send()
    eq('settled', H.wait_run_end().status, 'status')
    contains({ H.of_type('run_start')[1].prompt }, '<resource uri="' .. uri .. '#L7-L10">', 'sent')
    vim.lsp.get_client_by_id(id):stop()
    H.wait_for(function()
      return vim.lsp.get_client_by_id(id) == nil
    end, 'the server stopped')
  end)

  test('<Plug>(kgent-reject-always) and <Plug>(kgent-review)', function()
    H.fresh({ files = { ['sample.py'] = 'value = 1\n' }, setup = { model = 'tool-loop', approval = 'inline' } })
    truthy(vim.fn.maparg('<Plug>(kgent-review)', 'n') ~= '', 'review mapped')
    kgent.run('Change value to 2')
    H.wait_for(function()
      return #approval.list() == 1
    end, 'the approval')
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('<Plug>(kgent-reject-always)', true, false, true), 'mx', false)
    H.wait_for(function()
      return #H.of_type('permission_resolved') >= 1
    end, 'the answer')
    eq('reject_always', H.of_type('permission_resolved')[1].decision, 'rejected always')
    H.wait_for(function()
      if #approval.list() > 0 then
        kgent.approve('reject_once')
      end
      return #H.of_type('run_end') == 1
    end, 'the run_end')
  end)
end
