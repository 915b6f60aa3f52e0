-- Keypress → first transcript line, cold and warm, in real headless Neovim against the real daemon (a measurement,
-- not a test: it prints the times). Run: KGENT_TEST_MAIN=editors/nvim/tests/latency.lua bash editors/nvim/tests/run.sh
-- "First line": the run's header (`## Run …`), written from the daemon's first event; cold, the plugin's own
-- "starting the daemon…" line before it is timed too. Cold: the daemon starts with the command
-- (setup{ prewarm = false }); warm: it is running (prewarmed at setup(), or from the run before).
local here = vim.fs.dirname(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p'))
vim.opt.rtp:prepend(vim.fs.dirname(here))
vim.cmd('runtime plugin/kgent.lua')
vim.o.swapfile = false
local H = dofile(here .. '/harness.lua')
local kgent = require('kgent')
local ROUNDS = tonumber(os.getenv('KGENT_LATENCY_ROUNDS') or '3')

local notes = {} -- cold: ms until the transcript shows the plugin's own "starting the daemon…" line

local function count(pattern)
  return #vim.tbl_filter(function(l)
    return l:find(pattern) ~= nil
  end, H.transcript())
end

local function first_line_ms(prompt)
  local before = count('^## Run ')
  local noted = count('starting the daemon')
  local t0 = vim.uv.hrtime()
  vim.cmd('Kgent run ' .. prompt)
  if count('starting the daemon') > noted then
    notes[#notes + 1] = (vim.uv.hrtime() - t0) / 1e6
  end
  H.wait_for(function()
    local n = #vim.tbl_filter(function(l)
      return l:find('^## Run ') ~= nil
    end, H.transcript())
    return n > before
  end, 'the first line')
  local ms = (vim.uv.hrtime() - t0) / 1e6
  H.wait_for(function()
    return #H.of_type('run_end') > 0
  end, 'the run_end')
  H.events = {}
  return ms
end

local function median(xs)
  table.sort(xs)
  return xs[math.ceil(#xs / 2)]
end

H.test('latency: keypress → first transcript line, cold and warm', function()
  local cold, warm, prewarmed = {}, {}, {}
  for _ = 1, ROUNDS do
    H.fresh({ setup = { prewarm = false } })
    cold[#cold + 1] = first_line_ms('Say hello.')
    warm[#warm + 1] = first_line_ms('Again.')
    H.fresh({ setup = { prewarm = true } })
    H.wait_for(function()
      return kgent.state.conn and kgent.state.conn.warm
    end, 'the prewarmed daemon')
    prewarmed[#prewarmed + 1] = first_line_ms('Say hello.')
  end
  io.stdout:write(
    ('latency (ms, median of %d): cold %.0f · warm %.0f · first run after prewarm %.0f\n'):format(
      ROUNDS,
      median(cold),
      median(warm),
      median(prewarmed)
    )
  )
  io.stdout:write(
    ('  cold %s\n  warm %s\n  after prewarm %s\n'):format(vim.inspect(cold), vim.inspect(warm), vim.inspect(prewarmed))
  )
  -- Cold, the plugin writes "starting the daemon…" to the transcript as the command runs, before the run's header.
  H.eq(ROUNDS, #notes, 'a "starting the daemon…" line in every cold round')
  io.stdout:write(
    ('  cold, the "starting the daemon…" line: median %.1f ms %s\n'):format(median(notes), vim.inspect(notes))
  )
end)

H.run_all()
