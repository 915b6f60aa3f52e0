-- Approval fatigue, measured (issue 25; a measurement, not a test: it prints what it saw). In real headless Neovim
-- against the real daemon: a 20-call session of ordinary work (run the tests, grep, read, edit, write, git) where
-- every approval is answered "always" (the project answer when offered, else the session one, else allow once);
-- then the workspace's files are put back and the same 20 calls run in a second session. Prints the rules the first
-- session created (agent/rules) and every approval the second session asked.
-- Run: KGENT_TEST_MAIN=editors/nvim/tests/rules_measure.lua bash editors/nvim/tests/run.sh
local here = vim.fs.dirname(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p'))
vim.opt.rtp:prepend(vim.fs.dirname(here))
vim.cmd('runtime plugin/kgent.lua')
vim.o.swapfile = false
local H = dofile(here .. '/harness.lua')
local kgent = require('kgent')
local rules = require('kgent.rules')

local FILES = {
  ['src/app.py'] = 'from util import double\n\nvalue = 1\nprint(double(value))\n',
  ['src/util.py'] = 'def double(x):\n    return x * 2\n',
  ['tests/test_app.py'] = 'import sys\nsys.path.insert(0, "src")\nfrom util import double\n\n\ndef test_double():\n'
    .. '    assert double(2) == 4\n',
  ['README.md'] = '# demo\n',
  ['Makefile'] = 'test:\n\tpython3 -m pytest -q tests\n',
}

local function bash(c)
  return { { tool = 'bash', args = { command = c } } }
end

-- 20 calls, one per model turn, as a model does ordinary work.
local TURNS = {
  { { tool = 'grep', args = { pattern = 'double', path = 'src' } } },
  { { tool = 'read', args = { path = 'src/app.py' } } },
  bash('python3 -m pytest -q tests'),
  bash('git status --short'),
  bash('grep -rn value src && python3 src/app.py'),
  { { tool = 'edit', args = { path = 'src/app.py', oldText = 'value = 1', newText = 'value = 2' } } },
  bash('python3 -m pytest -q tests'),
  bash('python3 src/app.py'),
  { { tool = 'edit', args = { path = 'src/util.py', oldText = 'x * 2', newText = '2 * x' } } },
  bash('python3 -m pytest -q tests/test_app.py'),
  bash('make test'),
  { { tool = 'write', args = { path = 'docs/notes.md', content = '# notes\n\nvalue is 2\n' } } },
  bash('git diff --stat'),
  bash('ls -la src'),
  { { tool = 'edit', args = { path = 'README.md', oldText = '# demo', newText = '# demo app' } } },
  bash('python3 -m pytest -q tests -k double'),
  bash('grep -n double src/util.py tests/test_app.py'),
  bash('mkdir -p build && cp src/app.py build/'),
  bash('make test'),
  bash('git status --short && git diff --stat'),
  { { text = 'Done: value is 2, tests pass.' } },
}

local function put_back(ws)
  for name, text in pairs(FILES) do
    H.write_file(ws .. '/' .. name, text)
  end
  vim.fn.delete(ws .. '/docs', 'rf')
  vim.fn.delete(ws .. '/build', 'rf')
end

local function asked_of()
  local out = {}
  for _, t in ipairs(H.timeline) do
    if t[1] == 'KgentPermission' then
      local tc = t[2].toolCall or {}
      out[#out + 1] = tc.command or tc.title or tc.name
    end
  end
  return out
end

local function measure(trusted)
  local asked = {}
  local ws = H.fresh({ files = FILES, setup = { model = H.script(TURNS) } })
  io.stdout:write(('== %s project\n'):format(trusted and 'a trusted' or 'an untrusted'))
  if trusted then
    -- The same trust as extensions (the user config dir: run.sh's temporary XDG_CONFIG_HOME).
    vim.fn.system({ H.kgent_bin, 'extensions', '--trust', '--workspace', ws })
    assert(vim.v.shell_error == 0, 'kgent extensions --trust failed')
  end
  vim.fn.system({ 'git', '-C', ws, 'init', '-q' })
  vim.fn.system({ 'git', '-C', ws, 'add', '-A' })
  vim.fn.system({ 'git', '-C', ws, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'init' })
  H.stub_select(function(items, _, on_choice)
    for _, kind in ipairs({ 'allow_always_project', 'allow_always', 'allow_once' }) do
      for _, it in ipairs(items) do
        if it.option and (it.option.optionId == kind) then
          return on_choice(it)
        end
      end
    end
    on_choice(H.item(items, 'allow_once'))
  end)
  for round = 1, 2 do
    H.timeline, H.events = {}, {}
    kgent.new_session()
    kgent.run('Make value 2 and keep the tests green.')
    local e = H.wait_run_end(600000)
    asked[round] = asked_of()
    local calls = #H.of_type('tool_call')
    io.stdout:write(
      ('session %d: %s, %d tool calls, %d approvals asked\n'):format(round, e.status, calls, #asked[round])
    )
    for _, a in ipairs(asked[round]) do
      io.stdout:write('    asked: ' .. tostring(a) .. '\n')
    end
    if round == 1 then
      local got
      rules.fetch(function(err, r)
        got = err or r
      end)
      H.wait_for(function()
        return got ~= nil
      end, 'agent/rules')
      io.stdout:write('rules after session 1:\n')
      for _, r in ipairs(got.rules or {}) do
        io.stdout:write(('    %-7s %-5s %s   (%s)\n'):format(r.scope, r.decision, r.rule, r.text or ''))
      end
      put_back(ws)
    end
  end
end

H.test('measure: an untrusted project', function()
  measure(false)
end)
H.test('measure: a trusted project', function()
  measure(true)
end)
H.run_all()
