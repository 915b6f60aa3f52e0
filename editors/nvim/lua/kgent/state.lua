-- What the modules behind the Lua API share: the plugin's state (require('kgent').state is this table) and how
-- they tell the user something.
local M = {}

---@class kgent.Run
---@field id string
---@field session_id string
---@field workspace string
---@field live boolean
---@field result table?  its run_end event
---@field conn kgent.Conn  the daemon running it

---@class kgent.State
---@field conn kgent.Conn?
---@field session_id string?  the session `:Kgent run` continues (nil: the next run starts a new one)
---@field session_workspace string?
---@field run_id string?  the latest live run (target of cancel, steer, followup)
---@field runs table<string, kgent.Run>
---@field mode string?  chosen with :Kgent mode for the next runs (nil: setup{}'s, else the daemon's)
---@field provider string?  chosen with :Kgent provider / :Kgent model
---@field model string?  chosen with :Kgent model
M.state = { conn = nil, session_id = nil, session_workspace = nil, run_id = nil, runs = {} }

--- vim.notify with the plugin's prefix.
---@param msg string
---@param level integer?  default INFO
function M.notify(msg, level)
  vim.notify('kgent: ' .. msg, level or vim.log.levels.INFO)
end

return M
