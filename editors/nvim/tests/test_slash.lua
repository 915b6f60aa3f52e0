-- Slash commands in the chat buffer, against the real daemon on the scripted provider, in real headless Neovim:
--   (loaded by test_kgent.lua: bash tests/run.sh runs them with the rest; KGENT_TEST_FILTER=slash alone)
-- `/` at the start of the prompt opens the completion menu of the workspace's commands (agent/commands); a picked
-- template is sent as typed and the daemon expands it (the user_message event carries the expansion). The commands
-- that are no prompt are done by their action: /help, /cost, /mode, /model answered by agent/command into the
-- transcript, /clear a new session, /rewind the rewind flow. :Kgent export opens the session in a buffer.
return function(H)
  local test, eq, truthy, contains = H.test, H.eq, H.truthy, H.contains

  local TEMPLATE = '---\ndescription: Explain a file\nargument-hint: <path>\n---\nExplain $1 please.\n'

  local function words(items)
    return vim.tbl_map(function(i)
      return i.word
    end, items)
  end

  test('slash: / in the chat completes the commands; a picked template runs expanded', function()
    local config_dir = vim.fn.tempname()
    H.write_file(config_dir .. '/prompts/standup.md', 'Write my stand-up from $ARGUMENTS.\n')
    H.fresh({
      files = { ['.kgent/prompts/explain.md'] = TEMPLATE },
      setup = { env = { KGENT_CONFIG_DIR = config_dir } },
    })
    local chat = require('kgent.chat')
    chat.open()
    local cbuf = chat.state.buf
    eq(cbuf, vim.api.nvim_get_current_buf(), 'the cursor is in the chat')
    local slash = vim.fn.maparg('/', 'i', false, true)
    truthy(slash.expr == 1 and slash.buffer == 1, '/ is mapped in the chat')
    vim.api.nvim_buf_set_lines(cbuf, 0, -1, false, { '' })
    vim.api.nvim_win_set_cursor(0, { 1, 0 })
    eq('/<C-x><C-o>', slash.callback(), '/ at the start opens the menu')
    vim.api.nvim_buf_set_lines(cbuf, 0, -1, false, { 'see a/b' })
    vim.api.nvim_win_set_cursor(0, { 1, 5 })
    eq('/', slash.callback(), 'a / inside the text is just a /')

    vim.api.nvim_buf_set_lines(cbuf, 0, -1, false, { '/ex' })
    vim.api.nvim_win_set_cursor(0, { 1, 2 }) -- Normal mode: on the `x`, so `/e` is before it
    eq(0, chat.omnifunc(1, ''), 'start column of /')
    vim.api.nvim_buf_set_lines(cbuf, 0, -1, false, { 'a', '/ex' })
    vim.api.nvim_win_set_cursor(0, { 2, 2 })
    eq(-3, chat.omnifunc(1, ''), 'only at the start of the prompt')
    local all = words(chat.omnifunc(0, '/'))
    for _, w in ipairs({ '/compact ', '/init ', '/review ', '/explain ', '/standup ' }) do
      contains(all, w, 'offers ' .. w)
    end
    local items = chat.omnifunc(0, '/ex')
    eq({ '/explain ' }, words(items), 'matches /ex')
    eq('/explain <path>', items[1].abbr, 'the argument hint')
    eq('Explain a file (project)', items[1].menu, 'the description and where it comes from')
    vim.api.nvim_buf_set_lines(cbuf, 0, -1, false, { 'explain #di' })
    vim.api.nvim_win_set_cursor(0, { 1, 11 })
    eq(8, chat.omnifunc(1, ''), 'the # variables still complete')

    vim.api.nvim_buf_set_lines(cbuf, 0, -1, false, { '/explain app.py' })
    chat.send()
    local e = H.wait_run_end()
    eq('settled', e.status, 'status')
    local user = H.of_type('user_message')[1]
    eq('Explain app.py please.\n', user.text, 'the model was sent the expansion')
  end)

  test('slash: an unknown command is refused with the close names, nothing runs', function()
    H.fresh({ files = { ['.kgent/prompts/explain.md'] = TEMPLATE } })
    require('kgent.chat').open()
    vim.api.nvim_buf_set_lines(require('kgent.chat').state.buf, 0, -1, false, { '/explian app.py' })
    require('kgent.chat').send()
    H.wait_for(function()
      for _, n in ipairs(H.notes) do
        if n:find('unknown command /explian', 1, true) then
          return true
        end
      end
    end, 'the error')
    local shown = table.concat(H.notes, '\n')
    truthy(shown:find('/explain', 1, true), 'names the close one: ' .. shown)
    eq(0, #H.of_type('run_start'), 'no run')
  end)

  -- What the chat sends, as typed there: the lines into the chat buffer, then <CR>'s send().
  local function type_and_send(text)
    local chat = require('kgent.chat')
    chat.open()
    vim.api.nvim_buf_set_lines(chat.state.buf, 0, -1, false, vim.split(text, '\n', { plain = true }))
    return chat.send()
  end

  local function wait_line(needle, what)
    H.wait_for(function()
      return H.has_line(H.transcript(), needle)
    end, what or needle)
  end

  local function run_and_wait(prompt, n)
    require('kgent').run(prompt)
    H.wait_for(function()
      return #H.of_type('run_end') >= n
    end, 'run_end ' .. n)
    return H.of_type('run_end')[n]
  end

  test('slash: /help is answered in the transcript as a note, no run', function()
    H.fresh()
    type_and_send('/help')
    wait_line('_/cost', 'the help lines, as notes')
    local lines = H.transcript()
    contains(lines, '_Slash commands (type them at the start of a prompt):_', 'its first line')
    contains(lines, '_/mode', 'the /mode line')
    eq(0, #H.of_type('run_start'), 'no run')
    eq({}, H.notes_at(vim.log.levels.ERROR), 'no error')
  end)

  test('slash: /mode plan and /model (the daemon answers them) choose the next run of the session', function()
    H.fresh()
    run_and_wait('first', 1)
    eq('ask', H.of_type('run_start')[1].mode, "the first run: setup{}'s mode")
    type_and_send('/mode plan')
    wait_line("_Mode for this session's next runs: plan", 'the answer, as a note')
    eq('plan', require('kgent').state.mode, 'the next runs name it')
    eq('plan', require('kgent.choose').current().mode, ':Kgent mode shows it')
    local script = H.script({ { { text = 'The other model speaking.' } } })
    type_and_send('/model ' .. script)
    wait_line("_Model for this session's next runs: " .. script, 'the /model answer')
    type_and_send('second')
    H.wait_for(function()
      return #H.of_type('run_end') == 2
    end, 'the second run')
    local second = H.of_type('run_start')[2]
    eq('plan', second.mode, 'the second run is plan')
    eq(script, second.model, 'with the model /model chose')
    eq(H.of_type('run_start')[1].sessionId, second.sessionId, 'in the same session')
    contains(H.transcript(), 'The other model speaking.', 'its answer')
    eq({}, H.notes_at(vim.log.levels.ERROR), 'no error')
  end)

  test('slash: /cost after a run (as :Kgent run /cost) says what this session spent, no run', function()
    H.fresh()
    run_and_wait('spend something', 1)
    vim.cmd('Kgent run /cost')
    wait_line('This session so far:', 'the cost')
    eq(1, #H.of_type('run_start'), 'no second run')
    eq({}, H.notes_at(vim.log.levels.ERROR), 'no error')
  end)

  test('slash: /clear starts the conversation afresh: the next prompt gets a new session', function()
    H.fresh()
    local first = run_and_wait('one', 1)
    type_and_send('/clear')
    wait_line('Your next prompt starts a new session', "the daemon's line")
    eq(nil, require('kgent').state.session_id, 'no current session')
    eq(1, #H.of_type('run_start'), 'no run')
    type_and_send('two')
    H.wait_for(function()
      return #H.of_type('run_end') == 2
    end, 'the second run')
    local second = H.of_type('run_end')[2]
    truthy(first.sessionId and second.sessionId and first.sessionId ~= second.sessionId, 'a new session')
    contains(H.transcript(), '_Your next prompt starts a new session (this one stays in History)._', 'its transcript')
  end)

  test('slash: /rewind opens the rewind flow (picker, then the dry run in confirm())', function()
    H.fresh()
    run_and_wait('change nothing', 1)
    H.stub_select(function(items, _, on_choice)
      on_choice(items[1])
    end)
    local real_confirm = vim.fn.confirm
    local asked
    vim.fn.confirm = function(msg)
      asked = msg
      return 2
    end
    local ok, err = pcall(function()
      type_and_send('/rewind')
      H.wait_for(function()
        return H.has_line(H.notes, 'rewind: nothing changed')
      end, 'the rewind flow')
    end)
    vim.fn.confirm = real_confirm
    truthy(ok, tostring(err))
    eq('kgent.rewind', H.prompts[1].opts.kind, 'the rewind picker')
    truthy(asked:find('Restore the files to before "change nothing"', 1, true), asked)
    eq(1, #H.of_type('run_start'), 'no run')
  end)

  test('slash: a command while a run is live is done at once, not steered into it', function()
    H.fresh({ setup = { model = H.gate_script() } })
    local held
    H.stub_select(function(items, _, on_choice)
      held = function()
        on_choice(H.item(items, 'reject_once'))
      end
    end)
    require('kgent.slash').menu() -- what typing `/` in the chat lists
    type_and_send('Start.')
    H.wait_for(function()
      return held
    end, 'the run, held at its approval')
    eq('run', type_and_send('/cost'), 'done, not steered')
    wait_line('This session so far:', 'the cost')
    held()
    H.wait_run_end()
    truthy(not H.has_line(H.notes, 'steering'), 'nothing steered: ' .. table.concat(H.notes, '\n'))
    for _, u in ipairs(H.of_type('user_message')) do
      truthy(not u.text:find('/cost', 1, true), 'the model never saw /cost: ' .. u.text)
    end
  end)

  test(':Kgent export opens the session as Markdown in a new buffer, :Kgent export html as HTML', function()
    H.fresh()
    local kgent = require('kgent')
    kgent.export()
    contains(H.notes, 'no session to export', 'without a session')
    local e = run_and_wait('Export me, please', 1)
    local buf
    kgent.export(nil, function(err, b)
      buf = err or b
    end)
    H.wait_for(function()
      return buf
    end, 'the export')
    eq('number', type(buf), 'a buffer: ' .. vim.inspect(buf))
    eq(buf, vim.api.nvim_get_current_buf(), 'shown and focused')
    eq('markdown', vim.bo[buf].filetype, 'filetype')
    eq('', vim.bo[buf].buftype, 'a normal buffer')
    eq(false, vim.bo[buf].modified, 'not modified')
    eq('kgent-' .. e.sessionId .. '.md', vim.fs.basename(vim.api.nvim_buf_get_name(buf)), 'named after the file name')
    local md = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
    contains(md, 'Export me, please', 'the prompt')
    local path = H.root .. '/saved.md'
    vim.cmd('silent write ' .. vim.fn.fnameescape(path))
    eq(table.concat(md, '\n') .. '\n', H.read_file(path), ':w {path} saves it')
    local again
    kgent.export('md', function(err, b)
      again = err or b
    end)
    H.wait_for(function()
      return again
    end, 'the export again')
    eq(buf, again, 'exporting again refreshes the same buffer')

    eq({ 'md', 'html', 'json' }, require('kgent.commands').complete('', 'Kgent export ', 13), 'completion')
    eq({ 'html' }, require('kgent.commands').complete('h', 'Kgent export h', 14), 'completion of h')
    vim.cmd('Kgent export html')
    H.wait_for(function()
      return vim.bo.filetype == 'html'
    end, 'the HTML export')
    local html = vim.api.nvim_get_current_buf()
    truthy(html ~= buf, 'another buffer')
    eq('kgent-' .. e.sessionId .. '.html', vim.fs.basename(vim.api.nvim_buf_get_name(html)), 'its name')
    contains(vim.api.nvim_buf_get_lines(html, 0, -1, false), '<html', 'HTML')
    vim.cmd('Kgent export pdf')
    contains(H.notes, 'the format is md, html or json, not "pdf"', 'an unknown format')
  end)
end
