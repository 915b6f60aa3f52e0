-- Slash commands in the chat buffer: `/` at the start of the prompt offers the workspace's commands (the daemon's
-- `agent/commands`: built-ins and prompt templates, docs/prompts.md) in the chat's completion menu (its
-- 'omnifunc', kgent.chat). The daemon expands `/name args` when the prompt is sent.
local config = require('kgent.config')

local M = {}

local WAIT_MS = 3000

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

--- The daemon's commands for the workspace (waits up to WAIT_MS for the answer); nil and why on failure.
---@return table[]?, string?
function M.list()
  local conn, err = require('kgent.daemon').connection()
  if not conn then
    return nil, err
  end
  local done, result, failure = false, nil, nil
  conn:request('agent/commands', { workspace = config.workspace() }, function(e, r)
    done, result, failure = true, r, e
  end)
  if not vim.wait(WAIT_MS, function()
    return done
  end, 10) then
    return nil, 'the daemon did not list its commands in time'
  end
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
