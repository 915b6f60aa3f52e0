-- Slash commands in the chat buffer, against the real daemon on the scripted provider, in real headless Neovim:
--   KGENT_TEST_MAIN=$PWD/tests/test_slash.lua tests/run.sh
-- `/` at the start of the prompt opens the completion menu of the workspace's commands (agent/commands); a picked
-- template is sent as typed and the daemon expands it (the user_message event carries the expansion).
local here = vim.fs.dirname(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p'))
local plugin_dir = vim.fs.dirname(here)
vim.opt.rtp:prepend(plugin_dir)
vim.cmd('runtime plugin/kgent.lua')
vim.o.swapfile = false
vim.o.shortmess = vim.o.shortmess .. 'AF'

local H = dofile(here .. '/harness.lua')
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

H.run_all()
