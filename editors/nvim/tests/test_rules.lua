-- Issue 25 in real headless Neovim against the real daemon (loaded by test_kgent.lua): the approval shows the rule
-- each "always" answer creates (a compound command: one rule per simple command) and the next identical call is not
-- asked; :Kgent rules lists, adds and removes rules by scope; "approve with changes" from the diff tab's proposed
-- buffer (:w / ga) lands the user's version and tells the model what changed. A rule is shown as inline code, so
-- that markdown conceal leaves its `*` on screen.
return function(H)
  local kgent = require('kgent')
  local approval = require('kgent.approval')
  local rules = require('kgent.rules')
  local tr_mod = require('kgent.transcript')
  local md = require('kgent.md')
  local test, eq, truthy, contains = H.test, H.eq, H.truthy, H.contains

  local SAMPLE = 'value = 1\nprint(value)\n'
  local COMPOUND = 'python3 sample.py && touch done.txt'

  local function permissions()
    local out = {}
    for _, t in ipairs(H.timeline) do
      if t[1] == 'KgentPermission' then
        out[#out + 1] = t[2]
      end
    end
    return out
  end

  local function resolved()
    return H.of_type('permission_resolved')
  end

  test(
    'rules: an always answer on a compound command shows its rules; the identical call is not asked again',
    function()
      local script = H.script({
        { { tool = 'bash', args = { command = COMPOUND } } },
        { { tool = 'bash', args = { command = COMPOUND } } },
        { { text = 'Ran it twice.' } },
      })
      H.fresh({ files = { ['sample.py'] = SAMPLE }, setup = { model = script, approval = 'inline' } })
      kgent.run('Run the sample twice.')
      H.wait_for(function()
        return #approval.list() == 1
      end, 'the first approval')
      local p = approval.list()[1]
      local always = approval.option(p, 'allow_always')
      truthy(always and always.scope == 'session', 'a session "always" option: ' .. vim.inspect(p.params.options))
      truthy(
        type(always.rules) == 'table' and #always.rules == 2,
        'one rule per simple command: ' .. vim.inspect(always.rules)
      )
      local sid = p.params.sessionId
      local lines = tr_mod.lines(sid)
      for _, r in ipairs(always.rules) do
        contains(lines, ('rule %s: %s'):format(md.code(r.rule), r.text), 'the rule in words on the card')
      end
      -- on screen, with the transcript's conceal: every character of the rule (`bash(touch *)` keeps its `*`)
      local starred = vim.tbl_filter(function(r)
        return r.rule:find('*', 1, true) ~= nil
      end, always.rules)
      truthy(#starred > 0, 'a rule with a * to show: ' .. vim.inspect(always.rules))
      local twin = vim.fn.bufwinid(tr_mod.buf(sid))
      eq(2, vim.wo[twin].conceallevel, 'the transcript conceals markdown')
      for _, r in ipairs(starred) do
        for _, shown in ipairs(H.drawn(twin, 'rule ' .. md.code(r.rule))) do
          truthy(shown:find(r.rule, 1, true), ('the rule as drawn: %q'):format(shown))
        end
      end
      contains(lines, '[A] ' .. always.name, 'the always answer with its key')
      if approval.option(p, 'allow_always_project') then
        contains(lines, '[P] ' .. approval.option(p, 'allow_always_project').name, 'the project answer with its key')
      end
      -- A (the session "always") with the cursor anywhere in the transcript.
      local win = vim.fn.bufwinid(tr_mod.buf(sid))
      H.press(win, 'A')
      local e = H.wait_run_end()
      eq('settled', e.status, 'status')
      eq(1, #permissions(), 'asked once: the second identical call ran under the session rules')
      local res = resolved()
      eq(2, #res, 'both calls resolved: ' .. vim.inspect(res))
      eq('host', res[1].source, 'the first by the user')
      truthy(res[2].approved and res[2].source ~= 'host', 'the second by the rules it created: ' .. vim.inspect(res[2]))
      truthy(vim.uv.fs_stat(H.ws .. '/done.txt'), 'the command ran')
      -- The rules are listed by agent/rules as session rules of this session.
      local got
      rules.fetch(function(err, r)
        got = err or r
      end)
      H.wait_for(function()
        return got ~= nil
      end, 'agent/rules')
      local mine = {}
      for _, r in ipairs(got.rules or {}) do
        if r.scope == 'session' and r.sessionId == sid then
          mine[#mine + 1] = r.rule
        end
      end
      table.sort(mine)
      local want = { always.rules[1].rule, always.rules[2].rule }
      table.sort(want)
      eq(want, mine, 'the session rules')
    end
  )

  test('rules: md.code keeps a rule one code span, a backtick inside included', function()
    eq('`bash(grep *)`', md.code('bash(grep *)'), 'plain')
    eq('`` bash(echo `date`) ``', md.code('bash(echo `date`)'), 'a backtick: a longer fence, padded')
    eq('``` a``b ```', md.code('a``b'), 'two backticks: three')
  end)

  test('rules: a command no rule can cover says why on the card and offers no always answer', function()
    local script = H.script({
      { { tool = 'bash', args = { command = 'for i in $(seq 1 3); do touch f$i; done' } } },
      { { text = 'Done.' } },
    })
    H.fresh({ setup = { model = script } })
    local seen
    H.stub_select(function(items, o, on_choice)
      seen = seen or { items = items, prompt = o.prompt }
      on_choice(H.item(items, 'reject_once'))
    end)
    kgent.run('Make three files.')
    H.wait_for(function()
      return seen ~= nil
    end, 'the approval')
    H.wait_run_end()
    local p = H.prompts[1]
    truthy(p.opts.prompt:find('no "always" rule: ', 1, true), 'noRule in the prompt: ' .. p.opts.prompt)
    for _, it in ipairs(seen.items) do
      truthy(not (it.option and it.option.kind:find('always', 1, true)), 'no always option: ' .. vim.inspect(it))
    end
  end)

  test(
    'rules: in a trusted project (kgent extensions --trust) P answers for the project; the next session is not asked',
    function()
      local script = H.script({
        { { tool = 'bash', args = { command = 'touch made.txt' } } },
        { { text = 'Made it.' } },
      })
      local ws = H.fresh({ setup = { model = script, approval = 'inline' } })
      -- The trust file in run.sh's temporary XDG_CONFIG_HOME; the plugin leaves trust to it (no setting sent).
      vim.fn.system({ H.kgent_bin, 'extensions', '--trust', '--workspace', ws })
      eq(0, vim.v.shell_error, 'kgent extensions --trust')
      kgent.run('Make a file.')
      H.wait_for(function()
        return #approval.list() == 1
      end, 'the approval')
      local p = approval.list()[1]
      local project = approval.option(p, 'allow_always_project')
      truthy(project and project.scope == 'project', 'a project answer: ' .. vim.inspect(p.params.options))
      contains(tr_mod.lines(p.params.sessionId), '[P] ' .. project.name, 'with its key')
      H.press(vim.fn.bufwinid(tr_mod.buf(p.params.sessionId)), 'P')
      eq('settled', H.wait_run_end().status, 'first run')
      local cfg = H.read_file(ws .. '/.kgent/config.toml')
      truthy(cfg:find(project.rules[1].rule, 1, true), 'the rule in the project file:\n' .. cfg)
      -- The call's settled line says the server's words for the answer (permission_resolved.label).
      local first = resolved()[1]
      eq('always allowed in this project', first.label, "the server's label")
      contains(tr_mod.lines(p.params.sessionId), '· completed · always allowed in this project', 'the settled line')
      -- A new session: the project rule decides, nobody is asked.
      vim.fn.delete(ws .. '/made.txt')
      H.events, H.timeline = {}, {}
      kgent.run('Make a file again.', { new_session = true })
      eq('settled', H.wait_run_end().status, 'second run')
      eq(0, #permissions(), 'not asked in the new session')
      truthy(vim.uv.fs_stat(ws .. '/made.txt'), 'the command ran')
      -- Its line says which rule allowed it, in the server's words, the rule's `*` on screen.
      local by_rule = resolved()[1]
      eq(('allowed by the project rule %s'):format(md.code(project.rules[1].rule)), by_rule.label, 'the label')
      local tr = H.transcript()
      contains(tr, '· completed · ' .. by_rule.label, 'the settled line')
      for _, shown in ipairs(H.drawn(vim.fn.bufwinid(require('kgent.ui').buf()), by_rule.label)) do
        truthy(shown:find(project.rules[1].rule, 1, true), ('the rule as drawn: %q'):format(shown))
      end
    end
  )

  test(':Kgent rules: add (project, user, deny), listed by scope, dd removes, bad rules refused; completion', function()
    local ws = H.fresh({})
    -- Trusted, so that project rules go to the project's own file (untrusted: the user's own file for it).
    vim.fn.system({ H.kgent_bin, 'extensions', '--trust', '--workspace', ws })
    eq(0, vim.v.shell_error, 'kgent extensions --trust')
    eq({ 'add', 'list', 'remove' }, vim.fn.getcompletion('Kgent rules ', 'cmdline'), 'subcommands')
    eq({ 'add' }, vim.fn.getcompletion('Kgent rules a', 'cmdline'), 'add')
    eq({ '--deny' }, vim.fn.getcompletion('Kgent rules add --d', 'cmdline'), 'flags')
    contains(vim.fn.getcompletion('Kgent ru', 'cmdline'), 'rules', 'the subcommand')
    local function add(args)
      local done
      rules.add(args, function(err)
        done = { err = err }
      end)
      H.wait_for(function()
        return done ~= nil
      end, 'addRule ' .. args)
      return done.err
    end
    eq(nil, add('bash(npm test *)'), 'a project allow')
    eq(nil, add('--deny --project bash(git push *)'), 'a project deny')
    truthy(add('--user bash(npm test'), 'a bad rule is refused')
    truthy(
      H.has_line(H.notes_at(vim.log.levels.ERROR), 'bash(npm test'),
      'and said: ' .. vim.inspect(H.notes_at(vim.log.levels.ERROR))
    )
    local cfg = H.read_file(ws .. '/.kgent/config.toml')
    truthy(cfg:find('npm test *', 1, true) and cfg:find('git push *', 1, true), 'in the project file:\n' .. cfg)

    local shown
    vim.cmd('Kgent rules')
    local buf = vim.api.nvim_get_current_buf()
    eq('kgent://rules', vim.api.nvim_buf_get_name(buf), 'the rules buffer')
    H.wait_for(function()
      shown = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
      return H.has_line(shown, 'bash(git push *)')
    end, 'the rules listed')
    local project_row, deny_row, allow_row
    for i, l in ipairs(shown) do
      if l == '## Project rules (this project only)' then
        project_row = i
      elseif l:find('deny   `bash(git push *)`', 1, true) then
        deny_row = i
      elseif l:find('allow  `bash(npm test *)`', 1, true) then
        allow_row = i
      end
    end
    truthy(
      project_row and deny_row and allow_row and deny_row > project_row and allow_row > project_row,
      'both under the project scope:\n' .. table.concat(shown, '\n')
    )
    -- Drawn whole where markdown is concealed (a rule is inline code): the `*` stays.
    local rwin = vim.api.nvim_get_current_win()
    vim.wo[rwin].conceallevel = 2
    local drawn_rule = H.drawn(rwin, '`bash(git push *)`')[1]
    truthy(drawn_rule:find('bash(git push *)', 1, true), ('the rule as drawn: %q'):format(drawn_rule))
    -- dd on the deny line removes it (from the file too).
    vim.api.nvim_win_set_cursor(0, { deny_row, 0 })
    H.press(vim.api.nvim_get_current_win(), 'dd')
    H.wait_for(function()
      return not H.has_line(vim.api.nvim_buf_get_lines(buf, 0, -1, false), 'bash(git push *)')
    end, 'the rule gone from the list')
    contains(vim.api.nvim_buf_get_lines(buf, 0, -1, false), 'allow  `bash(npm test *)`', 'the other one stays')
    truthy(not H.read_file(ws .. '/.kgent/config.toml'):find('git push', 1, true), 'gone from the file')
    -- :Kgent rules remove from the command line.
    vim.cmd('Kgent rules remove bash(npm test *)')
    H.wait_for(function()
      return not H.has_line(vim.api.nvim_buf_get_lines(buf, 0, -1, false), 'bash(npm test *)')
    end, 'removed by :Kgent rules remove')
  end)

  test("approve with changes: the diff tab's proposed buffer is edited, :w lands it, the model is told", function()
    local script = H.script({
      { { tool = 'edit', args = { path = 'sample.py', oldText = 'value = 1', newText = 'value = 2' } } },
      { { text = 'Edited.' } },
    })
    local ws = H.fresh({ files = { ['sample.py'] = SAMPLE }, setup = { model = script, approval = 'inline' } })
    vim.cmd.edit(ws .. '/sample.py')
    local src = vim.api.nvim_get_current_buf()
    kgent.run('Set value to 2.')
    H.wait_for(function()
      return #approval.list() == 1
    end, 'the edit approval')
    local p = approval.list()[1]
    truthy(approval.can_answer_text(p), "the daemon takes the user's text (permissionNewText)")
    contains(tr_mod.lines(p.params.sessionId), 'accepts your version', 'the card says how')
    local win = vim.fn.bufwinid(tr_mod.buf(p.params.sessionId))
    H.press(win, 'd')
    local proposed = vim.api.nvim_get_current_buf()
    truthy(vim.api.nvim_buf_get_name(proposed):find('(proposed)', 1, true), 'in the proposed buffer')
    eq(true, vim.bo[proposed].modifiable, 'editable')
    eq({ 'value = 2', 'print(value)' }, vim.api.nvim_buf_get_lines(proposed, 0, -1, false), 'the proposal')
    vim.api.nvim_buf_set_lines(proposed, 0, 1, false, { 'value = 3  # mine' })
    vim.cmd('write')
    local e = H.wait_run_end()
    eq('settled', e.status, 'status')
    -- The file is open: the edit lands in its buffer (unsaved, as every edit of a loaded buffer); :w saves it.
    eq({ 'value = 3  # mine', 'print(value)' }, vim.api.nvim_buf_get_lines(src, 0, -1, false), "the user's version")
    vim.api.nvim_buf_call(src, function()
      vim.cmd('silent write')
    end)
    eq((SAMPLE:gsub('value = 1', 'value = 3  # mine')), H.read_file(ws .. '/sample.py'), 'on disk once saved')
    local res = resolved()
    eq(true, res[1].edited, 'permission_resolved says edited: ' .. vim.inspect(res[1]))
    local told
    for _, u in ipairs(H.of_type('tool_update')) do
      if
        type(u.output) == 'string'
        and u.output:find('+value = 3  # mine', 1, true)
        and u.output:find('-value = 2', 1, true)
      then
        told = u.output
      end
    end
    truthy(
      told,
      'the tool result shows the model the diff from its proposal: ' .. vim.inspect(H.of_type('tool_update'))
    )
    eq(1, #vim.api.nvim_list_tabpages(), 'the diff tab closed')
  end)

  test('approve with changes: ga accepts; an unchanged proposal is a plain allow once', function()
    local script = H.script({
      { { tool = 'edit', args = { path = 'sample.py', oldText = 'value = 1', newText = 'value = 2' } } },
      { { text = 'Edited.' } },
    })
    local ws = H.fresh({ files = { ['sample.py'] = SAMPLE }, setup = { model = script } })
    H.stub_select(function(items, _, on_choice)
      if #H.prompts == 1 then
        on_choice(H.item(items, 'diff'))
      end
    end)
    kgent.run('Set value to 2.')
    H.wait_for(function()
      return #approval.list() == 1 and approval.list()[1].diff ~= nil and #H.prompts == 2
    end, 'the diff tab and the picker again')
    local proposed = vim.api.nvim_get_current_buf()
    truthy(vim.b[proposed].kgent_accept_edited, 'the proposed buffer accepts')
    H.press(vim.api.nvim_get_current_win(), 'ga')
    local e = H.wait_run_end()
    eq('settled', e.status, 'status')
    eq('value = 2\nprint(value)\n', H.read_file(ws .. '/sample.py'), 'the proposal as it was')
    truthy(not resolved()[1].edited, 'not an edited answer')
  end)
end
