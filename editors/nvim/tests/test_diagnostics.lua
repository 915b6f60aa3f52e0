-- Diagnostics after edits in real headless Neovim, with a real LSP client attached (`ruff server`, which make
-- installs into the repo's .venv), against the real daemon (loaded by test_kgent.lua): the scripted edit that
-- introduces an undefined name gets the language server's diagnostic in its tool result; the fix reports none.
return function(H)
  local kgent = require('kgent')
  local test, eq, contains = H.test, H.eq, H.contains
  local ruff = vim.fs.dirname(H.kgent_bin) .. '/ruff'

  local function completed()
    local out = {}
    for _, u in ipairs(H.of_type('tool_update')) do
      if u.status == 'completed' then
        out[#out + 1] = u
      end
    end
    return out
  end

  test(
    'diagnostics: an edit that breaks the file reads ruff’s diagnostic from vim.diagnostic; the fix reads none',
    function()
      local script = H.script({
        { { tool = 'edit', args = { path = 'app.py', oldText = 'print(value)', newText = 'print(valu)' } } },
        { { tool = 'edit', args = { path = 'app.py', oldText = 'print(valu)', newText = 'print(value)' } } },
        { { text = 'Done.' } },
      })
      local ws =
        H.fresh({ files = { ['app.py'] = 'value = 1\nprint(value)\n' }, setup = { model = script, mode = 'auto' } })
      vim.cmd('filetype on')
      local group = vim.api.nvim_create_augroup('kgent_test_ruff', { clear = true })
      vim.api.nvim_create_autocmd('FileType', {
        group = group,
        pattern = 'python',
        callback = function(ev)
          vim.lsp.start({ name = 'ruff', cmd = { ruff, 'server' }, root_dir = ws }, { bufnr = ev.buf })
        end,
      })
      kgent.run('break it, then fix it')
      local e = H.wait_run_end()
      vim.api.nvim_del_augroup_by_id(group)
      for _, client in ipairs(vim.lsp.get_clients({ name = 'ruff' })) do
        client:stop(true)
      end
      eq('settled', e.status, 'status')
      local done = completed()
      eq(2, #done, 'two edits')
      local codes = vim.tbl_map(function(d)
        return d.code
      end, done[1].diagnostics or {})
      eq({ 'F821' }, codes, 'the breaking edit: the new diagnostic')
      contains({ done[1].output }, 'app.py:2:7: error F821 Undefined name `valu`', 'in the result the model reads')
      eq(0, #(done[2].diagnostics or { 'absent' }), 'the fix: none new')
      eq('value = 1\nprint(value)\n', H.read_file(ws .. '/app.py'), 'both edits on disk')
      eq(nil, require('kgent.files').buffer(ws .. '/app.py'), 'the buffer loaded for the question is unloaded again')
    end
  )
end
