-- A streamed answer in the transcript (issue 37: the web page re-rendered the whole answer on every delta), in real
-- headless Neovim against the real daemon (loaded by test_kgent.lua): each delta is appended at the transcript's end —
-- it rewrites at most the last line and reads only that one — however long the answer grows. Counted, not timed.
return function(H)
  local test, eq, truthy, contains = H.test, H.eq, H.truthy, H.contains

  test('streaming: each delta appends at the transcript end, never rewriting or rereading the answer so far', function()
    local parts = {}
    for i = 1, 150 do
      parts[#parts + 1] = ('Paragraph %d with **bold** and `code`, long enough to wrap.\n\n- item a\n- item b\n\n'):format(
        i
      )
    end
    parts[#parts + 1] = '```lua\nlocal x = 1\n```\n\nThe end.'
    local answer = table.concat(parts)
    local chunks = 1500 -- ~7 bytes a delta: many deltas end mid-line, many carry a line break
    H.fresh({
      setup = {
        model = H.script({
          { { thinking = 'Let me think.\nTwo lines.', chunks = 5 }, { text = answer, chunks = chunks } },
        }),
      },
    })

    local api, transcript = vim.api, require('kgent.transcript')
    local real = {
      append_stream = transcript.append_stream,
      set_text = api.nvim_buf_set_text,
      set_lines = api.nvim_buf_set_lines,
      get_lines = api.nvim_buf_get_lines,
    }
    -- Every buffer call made while a delta is streamed in: what it replaced or read, against the line count then.
    local streaming, deltas, far, reread, read = false, 0, {}, {}, 0
    transcript.append_stream = function(...)
      streaming = true
      deltas = deltas + 1
      local ok, err = pcall(real.append_stream, ...)
      streaming = false
      assert(ok, err)
    end
    local function written(buf, first, last)
      if streaming then
        local count = api.nvim_buf_line_count(buf)
        first = first < 0 and count + first + 1 or first
        last = last < 0 and count + last + 1 or last
        if first < count - 1 or last < count - 1 then
          far[#far + 1] = { first, last, count }
        end
      end
    end
    api.nvim_buf_set_text = function(buf, sr, sc, er, ec, repl)
      written(buf, sr, er)
      return real.set_text(buf, sr, sc, er, ec, repl)
    end
    api.nvim_buf_set_lines = function(buf, first, last, strict, repl)
      written(buf, first, last)
      return real.set_lines(buf, first, last, strict, repl)
    end
    api.nvim_buf_get_lines = function(buf, first, last, strict)
      local lines = real.get_lines(buf, first, last, strict)
      if streaming then
        read = read + #lines
        if #lines > 1 then
          reread[#reread + 1] = { first, last }
        end
      end
      return lines
    end
    local ok, err = pcall(function()
      vim.cmd('Kgent run Write a long answer.')
      eq('settled', H.wait_run_end().status, 'status')
    end)
    transcript.append_stream = real.append_stream
    api.nvim_buf_set_text, api.nvim_buf_set_lines, api.nvim_buf_get_lines =
      real.set_text, real.set_lines, real.get_lines
    assert(ok, err)

    truthy(deltas >= chunks / 2, 'the answer came in many deltas: ' .. deltas)
    eq(0, #far, 'no delta wrote above the last line: ' .. vim.inspect(far[1]))
    eq(0, #reread, 'no delta read more than one line: ' .. vim.inspect(reread[1]))
    truthy(read <= deltas, ('lines read while streaming: %d for %d deltas'):format(read, deltas))
    local tr = H.transcript()
    contains(tr, '> Let me think.', 'the thinking, quoted')
    contains(tr, '> Two lines.', 'its second line, quoted')
    contains(tr, 'Paragraph 1 with **bold**', 'the first paragraph')
    contains(tr, 'Paragraph 150 with **bold** and `code`, long enough to wrap.', 'the last paragraph, whole')
    contains(tr, 'local x = 1', 'the code')
    contains(tr, 'The end.', 'the last line')
    -- the answer's lines, in order and whole: the text, not a re-rendering of it
    local want = vim.split(answer, '\n', { plain = true })
    local at
    for i, l in ipairs(tr) do
      if l == want[1] then
        at = i
        break
      end
    end
    truthy(at, 'the answer starts in the transcript')
    eq(want, vim.list_slice(tr, at, at + #want - 1), 'the answer, line for line')
  end)
end
