-- What you type is what is sent, and the transcript shows what happened (issue 40), against the real daemon on the
-- scripted provider in real headless Neovim (loaded by test_kgent.lua; KGENT_TEST_FILTER=faithful runs them alone):
-- the chat's `#` and `/` menus insert nothing while one types, a running command's output shows while it runs,
-- :Kgent queue lists what :Kgent followup / steer queued, a resumed history keeps each call's outcome and counts its
-- entries as :Kgent sessions does, :help kgent works with no :helptags, an #image: attachment shows in the transcript.
return function(H)
  local test, eq, truthy, contains = H.test, H.eq, H.truthy, H.contains
  local kgent = require('kgent')
  local tr_mod = require('kgent.transcript')

  -- How many of `lines` contain `needle` (`exact`: are it).
  local function count(lines, needle, exact)
    local n = 0
    for _, l in ipairs(lines) do
      n = n + ((exact and l == needle or not exact and l:find(needle, 1, true)) and 1 or 0)
    end
    return n
  end

  -- The indentation of a tool's output under its line: a block of code in its list item (kgent.md.code_block).
  local OUT = '      '

  --- Resume `sid` as a new Neovim session would (no transcript, no current session); its transcript's lines.
  local function resumed(sid)
    require('kgent.ui').reset()
    kgent.state.session_id = nil
    local done
    kgent.resume_session(sid, function(err)
      done = err or true
    end)
    H.wait_for(function()
      return done
    end, 'the resume')
    eq(true, done, 'resumed')
    return tr_mod.lines(sid)
  end

  local TEMPLATE = '---\ndescription: Explain a file\nargument-hint: <path>\n---\nExplain $1 please.\n'

  test('faithful: # and / menus insert nothing as you type (default completeopt); what is typed is sent', function()
    local ws = H.fresh({
      files = { ['a.py'] = 'x = 1\n', ['.kgent/prompts/explain.md'] = TEMPLATE },
    })
    eq('menu,popup', vim.go.completeopt, "the default 'completeopt'")
    vim.cmd.edit(ws .. '/a.py')
    local src = vim.api.nvim_get_current_buf()
    local dns = vim.api.nvim_create_namespace('kgent-test-faithful')
    vim.diagnostic.set(dns, src, { { lnum = 0, col = 0, message = 'x is unused', severity = 2 } })
    local chat = require('kgent.chat')
    local cw = chat.open()
    local cbuf = chat.state.buf
    local menus = 0 -- completion menus shown in the chat
    vim.api.nvim_create_autocmd('CompleteChanged', {
      buffer = cbuf,
      callback = function()
        menus = menus + 1
      end,
    })
    local function holds()
      return vim.api.nvim_buf_get_lines(cbuf, 0, -1, false)
    end

    H.press(cw, 'ifix #diagnostics<Esc>')
    truthy(menus > 0, '# opened the menu')
    eq({ 'fix #diagnostics' }, holds(), 'typed through the # menu: nothing inserted')
    eq('menu,popup', vim.go.completeopt, "the global 'completeopt' is left alone")
    -- Picking from the menu still works: <C-n> selects (and inserts) the first match.
    H.press(cw, 'o#bu<C-n><Esc>')
    eq({ 'fix #diagnostics', '#buffer' }, holds(), '<C-n> picks #buffer')
    vim.api.nvim_buf_set_lines(cbuf, 0, -1, false, {})
    H.press(cw, 'ifix #diagnostics<C-s><Esc>')
    H.wait_for(function()
      return #H.of_type('user_message') == 1
    end, 'the run from the chat')
    local start = H.of_type('run_start')[1]
    contains({ start.prompt }, 'fix #diagnostics', 'the prompt as typed')
    truthy(not start.prompt:find('#bufferdiagnostics', 1, true), 'nothing inserted: ' .. start.prompt)
    contains({ start.prompt }, '#diagnostics">', 'the #diagnostics resource went with it')
    contains({ start.prompt }, '1:1 warning x is unused', 'the diagnostic')
    eq('settled', H.wait_run_end().status, 'the run')

    -- `/` at the start: the slash menu opens, typing goes on.
    H.events = {}
    menus = 0
    H.press(cw, 'i/ex<Esc>')
    truthy(menus > 0, '/ opened the menu')
    eq({ '/ex' }, holds(), 'typed through the / menu: nothing inserted (not "/clear ex")')
    vim.api.nvim_buf_set_lines(cbuf, 0, -1, false, {})
    H.press(cw, 'i/explain a.py<C-s><Esc>')
    eq('settled', H.wait_run_end().status, 'the template run')
    eq('Explain a.py please.\n', H.of_type('user_message')[1].text, 'sent as typed: the daemon expanded it')
  end)

  test('faithful: on Neovim 0.10 (no buffer-local completeopt) # and / open no menu while typing', function()
    local ws = H.fresh({ files = { ['a.py'] = 'x = 1\n' }, setup = { prewarm = false } })
    vim.cmd.edit(ws .. '/a.py')
    local chat = require('kgent.chat')
    if chat.state.buf and vim.api.nvim_buf_is_valid(chat.state.buf) then
      vim.api.nvim_buf_delete(chat.state.buf, { force = true })
    end
    chat.state.buf = nil
    local real_has = vim.fn.has
    vim.fn.has = function(feature)
      if feature == 'nvim-0.11' then
        return 0
      end
      return real_has(feature)
    end
    local ok, err = pcall(chat.open)
    vim.fn.has = real_has
    truthy(ok, tostring(err))
    local cbuf = chat.state.buf
    eq('', vim.bo[cbuf].completeopt, "no buffer-local 'completeopt' set")
    H.press(vim.fn.bufwinid(cbuf), 'ifix #diagnostics<CR>/ex<Esc>')
    eq({ 'fix #diagnostics', '/ex' }, vim.api.nvim_buf_get_lines(cbuf, 0, -1, false), 'typed as is')
    -- The next chat buffer is made on this Neovim again.
    vim.api.nvim_buf_delete(cbuf, { force = true })
    chat.state.buf = nil
  end)

  test("faithful: a running command's output shows live, its last lines replaced in place", function()
    -- The command prints in three steps. Before each step after the first it waits for the test to create a file
    -- (the test has seen the step before: no race with the command's end), then for the daemon's 0.25 s between
    -- two snapshots of a call's output to pass (so the step's output makes a snapshot of its own).
    local script = table.concat({
      'import os, time',
      'def step(name):',
      '    deadline = time.monotonic() + 120  # for the test, not for ever',
      '    while not os.path.exists(name) and time.monotonic() < deadline:',
      '        time.sleep(0.02)',
      '    time.sleep(0.3)',
      'print("line 1", flush=True)',
      'step("go1")',
      'print("\\n".join("line %d" % i for i in range(2, 13)), flush=True)',
      'step("go2")',
      'print("line 13", flush=True)',
      'step("go3")',
      'print("done", flush=True)',
    }, '\n') .. '\n'
    local ws = H.fresh({
      files = { ['live.py'] = script },
      setup = {
        mode = 'full',
        model = H.script({
          { { text = 'Running it.' }, { tool = 'bash', args = { command = 'python3 live.py' } } },
          { { text = 'It ran.' } },
        }),
      },
    })
    kgent.run('Run live.py.')
    local function finished()
      for _, u in ipairs(H.of_type('tool_update')) do
        if u.status == 'completed' or u.status == 'failed' then
          return true
        end
      end
      return false
    end
    local function shows(line)
      H.wait_for(function()
        return count(H.transcript(), line, true) > 0
      end, line .. ', live')
      truthy(not finished(), line .. ': shown before the command ended')
      return H.transcript()
    end
    local tr = shows(OUT .. 'line 1')
    contains(tr, '◐ Run `python3 live.py` · in progress', 'the call runs')
    eq(0, count(tr, OUT .. '…', true), 'nothing above the first line')
    -- Then the last 6 lines (transcript.tool_output_lines) of each snapshot, one copy of each: replaced in place,
    -- not appended.
    for _, case in ipairs({ { 'go1', 12 }, { 'go2', 13 } }) do
      H.write_file(ws .. '/' .. case[1], '')
      local last = case[2]
      tr = shows(OUT .. 'line ' .. last)
      for i = last - 5, last do
        eq(1, count(tr, OUT .. 'line ' .. i, true), 'line ' .. i .. ' shown once in:\n' .. table.concat(tr, '\n'))
      end
      for i = 1, last - 6 do
        eq(0, count(tr, OUT .. 'line ' .. i, true), 'bounded to the last lines: not line ' .. i)
      end
      eq(1, count(tr, OUT .. '…', true), 'more above')
    end
    H.write_file(ws .. '/go3', '')
    eq('settled', H.wait_run_end().status, 'status')
    tr = H.transcript()
    -- The result replaces the live lines: its first lines, as for every call.
    contains(tr, '✓ Run `python3 live.py` · completed', 'completed')
    eq(1, count(tr, OUT .. 'line 1', true), 'the result from its first line')
    eq(0, count(tr, OUT .. 'line 13', true), 'the live lines went')
    eq(0, count(tr, OUT .. '…', true), 'and their mark')
    contains(tr, 'more lines)', 'the rest counted')
    contains(tr, 'It ran.', 'the answer after it')
  end)

  -- Output and diffs that read as markdown: an underscore inside a word (Vim's markdownError), emphasis, a heading,
  -- a list item.
  local MARKDOWNISH = { 'test_05 **bold** *x*', '# heading', '- item' }

  --- Each of `lines` in transcript window `win` is drawn as it is, all of them in one highlight (a block of code),
  --- by Vim's markdown syntax and by the markdown parser.
  local function drawn_literally(win, lines, what)
    for _, engine in ipairs({ 'syntax', 'treesitter' }) do
      local seen = {}
      for _, line in ipairs(lines) do
        local texts, highlights = H.drawn(win, line, engine)
        for i, text in ipairs(texts) do
          local where = ('%s, %s: %q drawn as %q'):format(what, engine, line, text)
          truthy(text:find(line, 1, true), where)
          eq(1, #highlights[i], where .. ': highlights')
          seen[highlights[i][1]] = true
        end
      end
      eq(1, vim.tbl_count(seen), ('%s, %s: one highlight for all of them'):format(what, engine))
    end
  end

  test("faithful: a command's output and a proposed diff are drawn literally, not as markdown", function()
    local script = table.concat({
      'import os, time',
      'print("\\n".join(["out.py says"] + ' .. vim.json.encode(MARKDOWNISH) .. '), flush=True)',
      'deadline = time.monotonic() + 120  # for the test, not for ever',
      'while not os.path.exists("go") and time.monotonic() < deadline:',
      '    time.sleep(0.02)',
      'print("done", flush=True)',
    }, '\n') .. '\n'
    local diffed = 'name = snake_case_value # **bold** *x*'
    local ws = H.fresh({
      files = { ['out.py'] = script },
      setup = {
        approval = 'inline',
        model = H.script({
          { { tool = 'bash', args = { command = 'python3 out.py' } } },
          { { tool = 'write', args = { path = 'names.py', content = diffed .. '\n' } } },
          { { text = 'Done.' } },
        }),
      },
    })
    kgent.run('Run out.py, then write names.py.')
    H.wait_for(function()
      return #require('kgent.approval').list() == 1
    end, 'the command waiting for its approval')
    local twin = vim.fn.bufwinid(require('kgent.ui').buf())
    eq(2, vim.wo[twin].conceallevel, 'the transcript conceals markdown')
    H.press(twin, 'a')
    -- While it runs (the live lines), then its result.
    H.wait_for(function()
      return count(H.transcript(), '- item') > 0
    end, 'the live output')
    drawn_literally(twin, vim.list_extend({ 'out.py says' }, MARKDOWNISH), 'live output')
    H.write_file(ws .. '/go', '')
    H.wait_for(function()
      return #require('kgent.approval').list() == 1
    end, 'the write waiting for its approval')
    contains(H.transcript(), '✓ Run `python3 out.py` · completed', 'the result')
    drawn_literally(twin, vim.list_extend({ 'out.py says' }, MARKDOWNISH), 'output')
    -- The proposed diff on the approval card.
    contains(H.transcript(), '+' .. diffed, 'the diff on the card')
    drawn_literally(twin, { '+' .. diffed, '+++ b/names.py' }, 'diff')
    H.press(twin, 'r')
    eq('settled', H.wait_run_end().status, 'status')
  end)

  test("faithful: md.code_block indents past its list item's content; md.fenced's fence outlasts the text's", function()
    local md = require('kgent.md')
    eq({ '', '      # x', '      ' }, md.code_block({ '# x', '' }, 2), 'under a tool line, after a blank line')
    eq({ '', '    +a_b' }, md.code_block({ '+a_b' }), 'at the top')
    eq({}, md.code_block({}, 2), 'nothing: no blank line either')
    eq({ '```diff', '+x', '```' }, md.fenced({ '+x' }, 'diff'), 'three backticks')
    -- a patch of a markdown file: its context line " ```" would close a fence of three
    eq({ '````diff', ' ```', '````' }, md.fenced({ ' ```' }, 'diff'), 'one longer than the longest run')
  end)

  test('faithful: :Kgent queue lists what :Kgent followup and :Kgent steer queued in the run', function()
    H.fresh({ setup = { model = H.gate_script() } })
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
    vim.cmd('Kgent followup Then say x.')
    vim.cmd('Kgent steer Use y.')
    local chat = require('kgent.chat').state
    H.wait_for(function()
      return #chat.followups == 1 and #chat.steering == 1
    end, 'both held by the daemon')
    H.notes = {}
    vim.cmd('Kgent queue')
    eq(1, #H.notes, 'one message')
    local shown = vim.split(H.notes[1], '\n')
    contains(shown, 'queued in the run', ':Kgent queue')
    contains(shown, '  steering: Use y.', 'the steering message')
    contains(shown, '  1. Then say x.', 'the follow-up')
    held()
    eq('settled', H.wait_run_end().status, 'status')
    H.notes = {}
    vim.cmd('Kgent queue')
    contains(H.notes, 'no follow-up is queued', 'delivered: nothing left')
  end)

  test('faithful: resumed history keeps each outcome: rejected, cancelled, allowed — not "failed"', function()
    H.fresh({
      setup = {
        model = H.script({
          { { text = 'First.' }, { tool = 'bash', args = { command = 'touch refused.txt' } } },
          { { text = 'Second.' }, { tool = 'bash', args = { command = 'touch allowed.txt' } } },
          { { text = 'Done.' } },
        }),
      },
    })
    H.stub_select(function(items, o, on_choice)
      on_choice(H.item(items, o.prompt:find('refused', 1, true) and 'reject_once' or 'allow_once'))
    end)
    kgent.run('Touch two files.')
    local e = H.wait_run_end()
    eq('settled', e.status, 'first run')
    local sid = e.sessionId
    contains(H.transcript(), '· failed · rejected', 'live: the refused call')
    -- A second run whose command a cancel cuts short.
    H.events = {}
    kgent.run('Wait.', {
      mode = 'full',
      model = H.script({ { { text = 'Waiting.' }, { tool = 'bash', args = { command = 'sleep 60' } } } }),
    })
    H.wait_for(function()
      for _, u in ipairs(H.of_type('tool_update')) do
        if u.status == 'in_progress' then
          return true
        end
      end
    end, 'the command running')
    vim.cmd('Kgent cancel')
    eq('cancelled', H.wait_run_end().status, 'second run')
    contains(H.transcript(), '✗ Run `sleep 60` · cancelled', 'live: the cancelled call')

    local lines = resumed(sid)
    contains(lines, '- ✗ bash: `touch refused.txt` · rejected', 'the refused call')
    contains(
      lines,
      '- ✓ bash: `touch allowed.txt` · completed · allowed once',
      'the allowed call, with the decision'
    )
    contains(lines, '- ✗ bash: `sleep 60` · cancelled', 'the cancelled call')
    eq(0, count(lines, '· failed'), 'none shown as failed in:\n' .. table.concat(lines, '\n'))
  end)

  test('faithful: the resume header counts the entries :Kgent sessions counts (a forked session too)', function()
    H.fresh({ setup = { prewarm = false } })
    kgent.run('first question')
    local sid = H.wait_run_end().sessionId
    H.events = {}
    kgent.run('second question')
    H.wait_run_end()
    local function listed()
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
      local n = echoed:match(sid .. '  [^\n]-%((%d+) entries%)')
      return H.truthy(tonumber(n), 'the count in: ' .. echoed)
    end
    local function header(lines)
      for _, l in ipairs(lines) do
        local n, rest = l:match('^_.* · (%d+) entries(.*)_$')
        if n then
          return tonumber(n), rest
        end
      end
      error('no header in:\n' .. table.concat(lines, '\n'))
    end
    local n, rest = header(resumed(sid))
    eq(listed(), n, 'a linear session')
    eq('', rest, 'all on one branch')
    -- Fork before the second message and send it again: two branches.
    H.stub_select(function(items, _, on_choice)
      on_choice(items[1])
    end)
    vim.cmd('Kgent fork')
    H.wait_for(function()
      return H.has_line(H.notes, 'forked session')
    end, 'the fork')
    H.events = {}
    require('kgent.chat').send('second question, again')
    H.wait_run_end()
    n, rest = header(resumed(sid))
    eq(listed(), n, 'a forked session')
    local on_branch = tonumber(rest:match('^, (%d+) on this branch$'))
    truthy(on_branch and on_branch < n, 'the branch counted apart: ' .. rest)
  end)

  test('faithful: :help kgent works in a fresh Neovim with only the plugin on the runtimepath (doc/tags)', function()
    local plugin_dir = vim.fn.fnamemodify(vim.api.nvim_get_runtime_file('lua/kgent/init.lua', false)[1], ':h:h:h')
    local doc = plugin_dir .. '/doc'
    -- The shipped tags are those of the shipped text (:helptags on a copy; regenerate with
    -- `nvim --headless -u NONE -c 'helptags editors/nvim/doc' -c q`).
    local copy = vim.fn.tempname()
    vim.fn.mkdir(copy, 'p')
    vim.fn.writefile(vim.fn.readfile(doc .. '/kgent.txt'), copy .. '/kgent.txt')
    vim.cmd('helptags ' .. vim.fn.fnameescape(copy))
    eq(vim.fn.readfile(copy .. '/tags'), vim.fn.readfile(doc .. '/tags'), 'doc/tags is up to date')
    local out = vim.fn.tempname()
    local res = vim
      .system({
        vim.v.progpath,
        '--headless',
        '-u',
        'NONE',
        '-i',
        'NONE',
        '-n',
        '--cmd',
        'set rtp^=' .. vim.fn.fnameescape(plugin_dir),
        '-c',
        'help kgent',
        '-c',
        'call writefile([&buftype, getline("."), expand("%:t")], "' .. out .. '")',
        '-c',
        'qa!',
      }, { text = true })
      :wait(H.WAIT_MS)
    eq(0, res.code, 'nvim exits: ' .. tostring(res.stderr))
    local got = vim.fn.readfile(out)
    eq('help', got[1], 'a help buffer')
    contains({ got[2] }, '*kgent*', 'on the kgent tag')
    eq('kgent.txt', got[3], 'the plugin help')
  end)

  test('faithful: an #image: attachment shows in the transcript (name, type, size), live and on resume', function()
    local png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC'
    local ws = H.fresh({ setup = { prewarm = false } })
    local bytes = vim.base64.decode(png)
    local f = assert(io.open(ws .. '/shot.png', 'wb'))
    f:write(bytes)
    f:close()
    local cwd = vim.fn.getcwd()
    vim.cmd.cd(ws)
    local chat = require('kgent.chat')
    chat.open()
    vim.api.nvim_buf_set_lines(chat.state.buf, 0, -1, false, { 'What is this? #image:shot.png' })
    chat.send()
    vim.cmd.cd(cwd)
    local e = H.wait_run_end()
    eq('settled', e.status, 'status')
    local line = ('🖼 shot.png · image/png · %d B'):format(#bytes)
    local tr = H.transcript()
    contains(tr, '**You:** What is this? #image:shot.png', 'the message')
    contains(tr, line, 'the image under it')
    contains(resumed(e.sessionId), line, 'and on resume')
  end)
end
