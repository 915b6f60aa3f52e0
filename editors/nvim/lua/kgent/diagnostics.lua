-- Diagnostics after edits (protocol.md § Diagnostics): the daemon's agent/diagnostics answered from vim.diagnostic.get
-- once the file's diagnostics have changed (DiagnosticChanged) and gone quiet, or stayed quiet for a moment (nothing
-- was pending), never later than a bound below the daemon's timeout. A file without a loaded buffer is loaded for the
-- question (so its language server sees it) and unloaded again after the answer: the agent's edits to it still go to
-- the disk.
local M = {}

--- How long to wait (ms): with no change at all, after the last change, and at most.
M.quiet_ms, M.after_change_ms, M.max_ms = 1500, 300, 8000

local SEVERITY = { 'error', 'warning', 'information', 'hint' }

--- One vim.diagnostic as the wire's EditorDiagnostic.
---@param d vim.Diagnostic
---@return table
local function to_wire(d)
  local code = d.code
  return {
    line = d.lnum + 1,
    column = d.col + 1,
    severity = SEVERITY[d.severity] or 'error',
    message = d.message,
    source = d.source ~= '' and d.source or nil,
    code = (code ~= nil and code ~= '') and code or nil,
  }
end

--- The buffer of `path`, loaded (and whether this call loaded it).
---@param path string
---@return integer buf, boolean loaded_here
local function loaded(path)
  local buf = require('kgent.files').buffer(path)
  if buf then
    return buf, false
  end
  buf = vim.fn.bufadd(path)
  vim.fn.bufload(buf) -- reads the file and runs its autocommands (FileType: a language client attaches)
  return buf, true
end

--- Ask `client` for the buffer's diagnostics when it takes pull requests: Neovim pulls only for visible buffers, and
--- the file asked about is often hidden. The answer goes to the default handler (vim.diagnostic → DiagnosticChanged).
---@param client vim.lsp.Client
---@param buf integer
local function pull(client, buf)
  if client:supports_method('textDocument/diagnostic', buf) then
    client:request('textDocument/diagnostic', { textDocument = { uri = vim.uri_from_bufnr(buf) } }, nil, buf)
  end
end

--- Answer one agent/diagnostics request through `respond(result)` once the buffer's diagnostics settled.
---@param params table {path}
---@param respond fun(result: table)
function M.serve(params, respond)
  if vim.fn.filereadable(params.path) == 0 then
    respond({ diagnostics = {} })
    return
  end
  local buf, here = loaded(params.path)
  local quiet, bound = assert(vim.uv.new_timer()), assert(vim.uv.new_timer())
  local group = vim.api.nvim_create_augroup(('kgent_diagnostics_%d'):format(buf), { clear = true })
  local done = false
  local function finish()
    if done then
      return
    end
    done = true
    quiet:stop()
    quiet:close()
    bound:stop()
    bound:close()
    pcall(vim.api.nvim_del_augroup_by_id, group)
    local found = vim.tbl_map(to_wire, vim.diagnostic.get(buf))
    if here and not vim.bo[buf].modified and vim.fn.bufwinid(buf) == -1 then
      pcall(vim.api.nvim_buf_delete, buf, { unload = true })
    end
    respond({ diagnostics = found })
  end
  local later = vim.schedule_wrap(finish)
  vim.api.nvim_create_autocmd('DiagnosticChanged', {
    group = group,
    buffer = buf,
    callback = function()
      quiet:stop()
      quiet:start(M.after_change_ms, 0, later)
    end,
  })
  vim.api.nvim_create_autocmd('LspNotify', {
    group = group,
    buffer = buf,
    callback = function(ev)
      local method = ev.data and ev.data.method
      local client = ev.data and vim.lsp.get_client_by_id(ev.data.client_id)
      if client and (method == 'textDocument/didOpen' or method == 'textDocument/didChange') then
        pull(client, buf)
      end
    end,
  })
  for _, client in ipairs(vim.lsp.get_clients({ bufnr = buf })) do
    if client.initialized then
      pull(client, buf)
    end
  end
  quiet:start(M.quiet_ms, 0, later)
  bound:start(M.max_ms, 0, later)
end

return M
