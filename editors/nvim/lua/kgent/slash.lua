-- Slash commands in the chat buffer: `/` at the start of the prompt offers the workspace's commands (the daemon's
-- `agent/commands`: built-ins and prompt templates, docs/prompts.md) in the chat's completion menu (its
-- 'omnifunc', kgent.chat). The daemon expands `/name args` when the prompt is sent.
local config = require('kgent.config')

local M = {}

local WAIT_MS = 10000 -- the first list may wait for the daemon to start

--- The start column for 'omnifunc' when the cursor is on a `/name` at the very start of the prompt, else nil.
---@return integer?
function M.findstart()
  local row, col = unpack(vim.api.nvim_win_get_cursor(0))
  if row ~= 1 then
    return nil
  end
  local line = vim.api.nvim_get_current_line():sub(1, col)
  return line:match('^/[%w_%.%-]*$') and 0 or nil
end

--- The daemon's commands for the workspace (waits up to WAIT_MS for the answer, pumping the event loop); nil and why on failure.
---@return table[]?, string?
function M.list()
  local conn, err = require('kgent.daemon').connection()
  if not conn then
    return nil, err
  end
  local failure, result = conn:request_sync('agent/commands', { workspace = config.workspace() }, WAIT_MS)
  if failure then
    return nil, require('kgent.rpc').format_error(failure)
  end
  return result.commands
end

--- Completion items for `base` (what is typed so far, `/` included): the commands that run, hint and description
--- in the menu.
---@param base string
---@return table[]
function M.items(base)
  local commands, err = M.list()
  if not commands then
    require('kgent.state').notify('slash commands: ' .. tostring(err), vim.log.levels.WARN)
    return {}
  end
  local out = {}
  for _, c in ipairs(commands) do
    local word = '/' .. c.name
    if not c.shadowed and vim.startswith(word, base) then
      out[#out + 1] = {
        word = word .. ' ',
        abbr = word .. (c.argumentHint and (' ' .. c.argumentHint) or ''),
        menu = c.description .. (c.source ~= 'builtin' and (' (' .. c.source .. ')') or ''),
      }
    end
  end
  return out
end

return M
