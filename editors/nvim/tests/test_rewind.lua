-- :Kgent rewind in real headless Neovim against the real daemon (loaded by test_kgent.lua): in a git work tree a run
-- edits two files (one open in a buffer), creates one and runs `sed -i` on a fourth; the person edits one of them;
-- the picker, the confirm() with the plan, the files restored (the open buffer through the plugin), the conflict
-- left alone, the message back in the chat and the session forked before it.
return function(H)
  local kgent = require('kgent')
  local test, eq, truthy, contains = H.test, H.eq, H.truthy, H.contains

  local A, B, C = 'alpha\nbeta\ngamma\n', 'alpha\nbravo\ncharlie\n', 'charlie\ndelta\necho\n'

  test(
    ':Kgent rewind: confirm() shows the plan, files restored (the open buffer too), the conflict left, forked',
    function()
      local ws = H.fresh({
        files = { ['a.txt'] = A, ['b.txt'] = B, ['c.txt'] = C },
        setup = { prewarm = false, mode = 'full', model = 'rewind-edits' },
      })
      vim.fn.system({ 'git', '-C', ws, 'init', '-q' })
      eq(0, vim.v.shell_error, 'git init')
      vim.cmd('edit ' .. vim.fn.fnameescape(ws .. '/a.txt'))
      local abuf = vim.api.nvim_get_current_buf()
      kgent.run('change them')
      local e = H.wait_run_end()
      eq('settled', e.status, 'the run')
      eq({ 'alpha', 'BETA', 'gamma' }, vim.api.nvim_buf_get_lines(abuf, 0, -1, false), 'the edit in the buffer')
      eq('charlie\nDELTA\necho\n', H.read_file(ws .. '/c.txt'), 'the sed')
      H.write_file(ws .. '/b.txt', 'alpha\nbravo\nCHARLIE\nthe user line\n') -- the person's edit after the run

      H.stub_select(function(items, _, on_choice)
        on_choice(items[1])
      end)
      local real_confirm = vim.fn.confirm
      local asked
      vim.fn.confirm = function(msg, choices)
        asked = { msg = msg, choices = choices }
        return 1
      end
      local result
      local ok, err = pcall(function()
        require('kgent.rewind').rewind(function(rerr, res)
          result = rerr or res
        end)
        H.wait_for(function()
          return result
        end, 'the rewind')
      end)
      vim.fn.confirm = real_confirm
      truthy(ok, tostring(err))
      eq('kgent.rewind', H.prompts[1].opts.kind, 'the picker')
      truthy(asked.msg:find('Restore the files to before "change them"', 1, true), asked.msg)
      for _, line in ipairs({
        'restore: a.txt',
        'CONFLICT (left as it is): b.txt',
        'restore: c.txt',
        'restore: new.txt',
      }) do
        truthy(asked.msg:find(line, 1, true), 'the confirm lists ' .. line .. ':\n' .. asked.msg)
      end
      eq(true, result.forked, 'forked: ' .. vim.inspect(result))
      eq({ 'alpha', 'beta', 'gamma' }, vim.api.nvim_buf_get_lines(abuf, 0, -1, false), 'the buffer restored')
      eq(C, H.read_file(ws .. '/c.txt'), 'the sed undone')
      eq(0, vim.fn.filereadable(ws .. '/new.txt'), 'the created file removed')
      eq('alpha\nbravo\nCHARLIE\nthe user line\n', H.read_file(ws .. '/b.txt'), 'the conflict left alone')
      contains(H.notes, 'changed since, left as they are: b.txt', 'the note')
      local chat = require('kgent.chat')
      eq({ 'change them' }, vim.api.nvim_buf_get_lines(chat.state.buf, 0, -1, false), 'the message back in the chat')
      local serr, s =
        kgent.state.conn:request_sync('agent/session', { sessionId = e.sessionId, branchOnly = true }, H.WAIT_MS)
      eq(nil, serr, 'agent/session')
      eq(result.leafId, s.branch[#s.branch], 'the leaf before the message')
    end
  )

  test(':Kgent rewind: cancelling the confirm() changes nothing', function()
    local ws = H.fresh({
      files = { ['a.txt'] = A, ['b.txt'] = B, ['c.txt'] = C },
      setup = { prewarm = false, mode = 'full', model = 'rewind-edits' },
    })
    kgent.run('change them')
    H.wait_run_end()
    H.stub_select(function(items, _, on_choice)
      on_choice(items[1])
    end)
    local real_confirm = vim.fn.confirm
    local asked
    vim.fn.confirm = function(msg)
      asked = msg
      return 2
    end
    local result
    local ok, err = pcall(function()
      require('kgent.rewind').rewind(function(rerr, res)
        result = rerr or res
      end)
      H.wait_for(function()
        return result
      end, 'the answer')
    end)
    vim.fn.confirm = real_confirm
    truthy(ok, tostring(err))
    -- Outside git: the sed's effect is named as not restorable before anything is done.
    truthy(asked:find("Not restored: .*sed %-i 's/%^delta%$/DELTA/' c%.txt"), asked)
    eq('not confirmed', result.message, 'the answer')
    eq('alpha\nBETA\ngamma\n', H.read_file(ws .. '/a.txt'), 'nothing restored')
    truthy(H.read_file(ws .. '/new.txt'), 'nothing removed')
  end)
end
