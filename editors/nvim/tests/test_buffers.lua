-- Host-owned files and review, in real headless Neovim against the real daemon (loaded by test_kgent.lua): the agent
-- reads and edits loaded buffers, the shell sees them saved, and :Kgent review keeps and drops hunks.
return function(H)
  local kgent = require('kgent')
  local review = require('kgent.review')
  local test, eq, truthy, contains = H.test, H.eq, H.truthy, H.contains

  local A = 'alpha\nbeta\ncharlie\ndelta\necho\nfoxtrot\ngolf\nhotel\nindia\n'
  local B = 'alpha\nbravo\ncharlie\ndelta\necho\nfoxtrot\ngolf\nhotel\nindia\njuliet\n'

  local function lines(text)
    local out = vim.split(text, '\n', { plain = true })
    out[#out] = nil
    return out
  end

  local function permission_params()
    local out = {}
    for _, t in ipairs(H.timeline) do
      if t[1] == 'KgentPermission' then
        out[#out + 1] = t[2]
      end
    end
    return out
  end

  local function outputs()
    local out = {}
    for _, u in ipairs(H.of_type('tool_update')) do
      if u.status == 'completed' then
        out[#out + 1] = u.output or ''
      end
    end
    return out
  end

  test(
    'buffers: the agent reads the unsaved buffer, the approval diff shows it, the edit lands in it (undoable) and survives :w',
    function()
      local script = H.script({
        { { tool = 'read', args = { path = 'notes.txt' } } },
        { { tool = 'edit', args = { path = 'notes.txt', oldText = 'note', newText = 'NOTE' } } },
        { { text = 'Edited.' } },
      })
      local ws = H.fresh({ files = { ['notes.txt'] = 'on disk\n' }, setup = { model = script } })
      vim.cmd.edit(ws .. '/notes.txt')
      local buf = vim.api.nvim_get_current_buf()
      vim.api.nvim_buf_set_lines(buf, 0, -1, false, { 'note: unsaved in the editor', 'second line' })
      H.answer_all('allow_once')
      kgent.run('edit notes')
      local e = H.wait_run_end()
      eq('settled', e.status, 'status')
      contains({ outputs()[1] }, 'note: unsaved in the editor', 'the read saw the buffer')
      local asked = permission_params()
      eq(1, #asked, 'one approval (the edit)')
      eq(
        'note: unsaved in the editor\nsecond line\n',
        asked[1].toolCall.oldText,
        'the approval diff is against the buffer'
      )
      eq({ 'NOTE: unsaved in the editor', 'second line' }, vim.api.nvim_buf_get_lines(buf, 0, -1, false), 'buffer')
      eq(true, vim.bo[buf].modified, 'the edit is not saved')
      eq('on disk\n', H.read_file(ws .. '/notes.txt'), 'disk untouched')
      eq({ 'notes.txt' }, e.changedPaths, 'changedPaths include the buffer-only change')
      -- The run's patch is the change as the buffer saw it, not the disk's older text.
      contains(vim.split(e.patch, '\n'), '-note: unsaved in the editor', 'patch')
      contains(vim.split(e.patch, '\n'), '+NOTE: unsaved in the editor', 'patch')
      truthy(not e.patch:find('on disk', 1, true), 'the disk text is not in the patch')
      -- The editor's undo takes the agent's edit back, redo puts it again.
      vim.api.nvim_buf_call(buf, function()
        vim.cmd('silent undo')
      end)
      eq('note: unsaved in the editor', vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1], 'after undo')
      vim.api.nvim_buf_call(buf, function()
        vim.cmd('silent redo')
      end)
      -- The user's save keeps the agent's edit (and the user's own text).
      vim.api.nvim_buf_set_lines(buf, -1, -1, false, { 'the user goes on' })
      vim.api.nvim_buf_call(buf, function()
        vim.cmd('silent write')
      end)
      eq('NOTE: unsaved in the editor\nsecond line\nthe user goes on\n', H.read_file(ws .. '/notes.txt'), 'after :w')
    end
  )

  test('buffers: before a shell command the buffers the run wrote are saved, so the command sees them', function()
    local ws = H.fresh({ files = { ['notes.txt'] = 'on disk\n' }, setup = { model = 'buffer-edit' } })
    vim.cmd.edit(ws .. '/notes.txt')
    local buf = vim.api.nvim_get_current_buf()
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, { 'note: unsaved in the editor' })
    H.answer_all('allow_once')
    kgent.run('edit and check')
    eq('settled', H.wait_run_end().status, 'status')
    local out = outputs()
    contains({ out[#out] }, 'NOTE: unsaved in the editor', 'cat saw the saved buffer')
    eq('NOTE: unsaved in the editor\n', H.read_file(ws .. '/notes.txt'), 'disk')
    eq(false, vim.bo[buf].modified, 'saved')
  end)

  --- Run review-edits (full mode: no approvals) with a.txt open in a buffer and b.txt not loaded.
  local function four_hunks()
    local ws = H.fresh({ files = { ['a.txt'] = A, ['b.txt'] = B }, setup = { model = 'review-edits', mode = 'full' } })
    vim.cmd.edit(ws .. '/a.txt')
    local a = vim.api.nvim_get_current_buf()
    kgent.run('edit both')
    local e = H.wait_run_end()
    eq('settled', e.status, 'status')
    eq({ 'a.txt', 'b.txt' }, e.changedPaths, 'changedPaths')
    eq(
      lines(A:gsub('beta', 'BETA'):gsub('hotel', 'HOTEL')),
      vim.api.nvim_buf_get_lines(a, 0, -1, false),
      'a.txt buffer'
    )
    eq(A, H.read_file(ws .. '/a.txt'), 'a.txt disk (the edits are in the buffer)')
    eq(B:gsub('charlie', 'CHARLIE'):gsub('india', 'INDIA'), H.read_file(ws .. '/b.txt'), 'b.txt disk (not loaded)')
    return ws, a
  end

  local function file_win()
    for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
      if vim.w[w].kgent_review then
        return w
      end
    end
    error('no review file window')
  end

  local function press(keys)
    H.press(file_win(), keys)
    H.wait_for(function()
      return not review.busy()
    end, 'the review to settle after ' .. keys)
  end

  local function open_review()
    vim.cmd('Kgent review')
    H.wait_for(function()
      return review.view ~= nil and vim.api.nvim_buf_get_name(0):find('a.txt', 1, true)
    end, 'the review view')
  end

  test(
    'review: 4 hunks in 2 files, 3 accepted and 1 rejected with ga / ]h / gr; disk and buffers as expected',
    function()
      local ws, a = four_hunks()
      open_review()
      local qf = vim.fn.getqflist({ title = 1, items = 1 })
      eq('Kgent review', qf.title, 'quickfix title')
      eq(4, #qf.items, 'quickfix: one entry per hunk')
      eq({ 2, 8 }, { qf.items[1].lnum, qf.items[2].lnum }, 'quickfix lines of a.txt')
      contains({ qf.items[1].text }, '+ BETA', 'quickfix text')
      eq(2, vim.api.nvim_win_get_cursor(file_win())[1], 'the cursor starts on the first hunk')
      truthy(vim.wo[file_win()].diff, 'a diff view')
      -- The left side is the file with the pending hunks undone.
      local left = vim.fn.winbufnr(vim.fn.winnr('h'))
      eq(lines(A), vim.api.nvim_buf_get_lines(left, 0, -1, false), 'the before side')

      press('ga') -- keep BETA
      press(']h')
      eq(8, vim.api.nvim_win_get_cursor(file_win())[1], ']h moves to the next hunk')
      press('gr') -- drop HOTEL: reverted in the buffer
      H.wait_for(function()
        return vim.api.nvim_buf_get_name(0):find('b.txt', 1, true)
      end, 'the next file')
      eq(lines(A:gsub('beta', 'BETA')), vim.api.nvim_buf_get_lines(a, 0, -1, false), 'a.txt buffer after review')
      press('ga')
      press(']h')
      eq(9, vim.api.nvim_win_get_cursor(file_win())[1], 'on INDIA')
      press('ga')
      H.wait_for(function()
        return review.view == nil
      end, 'the review to close')
      contains(H.notes, 'review done: 3 accepted, 1 rejected', 'notification')

      eq(A, H.read_file(ws .. '/a.txt'), "a.txt disk: the agent's edits were never saved")
      eq(B:gsub('charlie', 'CHARLIE'):gsub('india', 'INDIA'), H.read_file(ws .. '/b.txt'), 'b.txt disk')
      local b = require('kgent.files').buffer(ws .. '/b.txt')
      eq(false, vim.bo[b].modified, 'b.txt buffer unmodified')
      vim.api.nvim_buf_call(a, function()
        vim.cmd('silent write')
      end)
      eq(A:gsub('beta', 'BETA'), H.read_file(ws .. '/a.txt'), 'a.txt disk after :w')

      -- The daemon agrees, and the model is told of the rejection with the next prompt.
      local err, result = kgent.state.conn:request_sync('agent/review', { sessionId = kgent.state.session_id }, 30000)
      eq(nil, err, 'agent/review')
      local statuses = {}
      for _, f in ipairs(result.runs[1].files) do
        for _, h in ipairs(f.hunks) do
          statuses[#statuses + 1] = f.path .. ':' .. h.newText:gsub('\n', '') .. '=' .. h.status
        end
      end
      eq(
        { 'a.txt:BETA=accepted', 'a.txt:HOTEL=rejected', 'b.txt:CHARLIE=accepted', 'b.txt:INDIA=accepted' },
        statuses,
        'statuses'
      )
    end
  )

  test('review: a hunk whose lines the user changed is reported as a conflict, not overwritten', function()
    local _, a = four_hunks()
    vim.api.nvim_buf_set_lines(a, 7, 8, false, { 'HOTEL, as the user wants it' })
    open_review()
    local qf = vim.fn.getqflist()
    contains({ qf[2].text }, 'would conflict', 'quickfix says so')
    vim.api.nvim_win_set_cursor(file_win(), { 8, 0 })
    press('gr')
    contains(H.notes_at(vim.log.levels.WARN), 'not rejected: the lines changed since the run', 'conflict reported')
    eq('HOTEL, as the user wants it', vim.api.nvim_buf_get_lines(a, 7, 8, false)[1], "the user's line stays")
    truthy(review.view ~= nil, 'the review goes on')
    -- Closing its tab by hand ends the review: its keys leave the file's buffer.
    local tabs = #vim.api.nvim_list_tabpages()
    vim.cmd('tabclose')
    eq(tabs - 1, #vim.api.nvim_list_tabpages(), 'the tab closed')
    H.flush()
    eq(nil, review.view, 'the review ended')
    eq('', vim.fn.maparg('gr', 'n', false, false), 'gr is unmapped')
  end)

  test('review: keys are configurable through setup{review = {keys = ...}}', function()
    H.fresh({ setup = { review = { keys = { accept = '<leader>y', reject = false } } } })
    local k = require('kgent.config').options.review.keys
    eq('<leader>y', k.accept, 'accept key')
    eq(false, k.reject, 'reject key switched off')
    eq(']h', k.next, 'the other defaults stay')
  end)
end
