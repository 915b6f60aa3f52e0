-- Options of require("kgent").setup{}: defaults, merging and validation.
-- Every default is documented in doc/kgent.txt (|kgent-config|); keep the two in step.
local M = {}

---@class kgent.TranscriptConfig
---@field layout "vsplit"|"split"|"tab"|"float"|"none"  where the transcript window opens
---@field size number  columns (vsplit) or lines (split); a number below 1 is a fraction of the editor
---@field open_on_run boolean  open the transcript window when a run starts
---@field focus boolean  move the cursor into the transcript when it opens
---@field show_thinking boolean  show the model's thinking (as a quote)
---@field tool_output_lines integer  lines of each tool's result shown under it (0: none)

---@class kgent.Config
---@field cmd string[]  the daemon command
---@field env table<string,string>  extra environment for the daemon
---@field provider string?  "openai" | "anthropic" | "scripted"; nil: the daemon's default
---@field model string?  model id (for "scripted": a script name); nil: the provider's default
---@field base_url string?  provider API base URL; nil: the provider's
---@field mode string?  "plan" | "ask" | "auto" | "full" | "risk_based"; nil: the daemon's default (ask)
---@field api_key (fun():string?)|nil  returns the key; nil: the daemon reads its environment
---@field approval_timeout number?  seconds before an unanswered approval is rejected; nil: wait
---@field max_turns integer?  model turns a run may take; nil: the daemon's default (KGENT_MAX_TURNS, else 200)
---@field trust_project_extensions boolean?  run the project's own extensions and MCP servers (they run code) and count its allow rules; nil: as `kgent extensions --trust` says
---@field workspace string|(fun():string)|nil  where runs work; nil: the current directory
---@field log_file string|false  the daemon's log file; false: its stderr (ends up in lsp.log)
---@field log_level string?  daemon log level (DEBUG, INFO, WARNING, ERROR); nil: WARNING
---@field reload_changed boolean  :checktime buffers of files a run changed, when it ends
---@field buffers boolean  serve loaded buffers to the agent (it reads unsaved text, its edits land in the buffer)
---@field diagnostics boolean  answer the agent's diagnostics requests after its edits from vim.diagnostic
---@field fs_timeout number?  seconds the daemon waits for a buffer before it uses the disk; nil: its default (10)
---@field review kgent.ReviewConfig
---@field prewarm boolean  start the daemon in the background on setup()
---@field approval "inline"|"select"  approvals in the transcript (keys), or through vim.ui.select
---@field approval_keys table<string, string|false>  inline approval keys: allow_once, allow_always, reject_once, reject_always, preview; by option id: allow_always_project, reject_always_project; options (pick any answer); accept_edited (the diff's proposed buffer)
---@field approval_diff_lines integer  lines of the proposed diff shown inline (0: none)
---@field chat kgent.ChatConfig
---@field transcript kgent.TranscriptConfig

---@class kgent.ReviewConfig
---@field keys table<string, string|false>  keys in the review's diff view: accept, reject, next, prev, accept_file, reject_file, close
---@field quickfix boolean  :Kgent review fills the quickfix list with the pending hunks

---@class kgent.ChatConfig
---@field height integer  lines of the chat window
---@field busy "steer"|"follow_up"  what sending does while a run is live (the other has its own key)

---@return kgent.Config
function M.defaults()
  return {
    cmd = { 'kgent', 'serve', '--stdio' },
    env = {},
    provider = nil,
    model = nil,
    base_url = nil,
    mode = nil,
    api_key = nil,
    approval_timeout = nil,
    max_turns = nil,
    trust_project_extensions = nil,
    workspace = nil,
    log_file = vim.fn.stdpath('log') .. '/kgent.log',
    log_level = nil,
    reload_changed = true,
    buffers = true,
    diagnostics = true,
    fs_timeout = nil,
    review = {
      keys = {
        accept = 'ga',
        reject = 'gr',
        next = ']h',
        prev = '[h',
        accept_file = 'gA',
        reject_file = 'gR',
        close = 'q',
      },
      quickfix = true,
    },
    prewarm = true,
    approval = 'inline',
    approval_keys = {
      allow_once = 'a',
      allow_always = 'A',
      reject_once = 'r',
      reject_always = 'R',
      preview = 'd',
      allow_always_project = 'P',
      reject_always_project = false,
      options = 'o',
      accept_edited = 'ga',
    },
    approval_diff_lines = 20,
    chat = {
      height = 6,
      busy = 'steer',
    },
    transcript = {
      layout = 'vsplit',
      size = 0.4,
      open_on_run = true,
      focus = false,
      show_thinking = true,
      tool_output_lines = 6,
    },
  }
end

---@type kgent.Config
M.options = M.defaults()

local layouts = { vsplit = true, split = true, tab = true, float = true, none = true }
local modes = { plan = true, ask = true, auto = true, full = true, risk_based = true }

-- vim.validate's signature changed in 0.11; this works the same on 0.10 and later.
local function check(name, value, types, optional)
  if value == nil and optional then
    return
  end
  types = type(types) == 'table' and types or { types }
  if not vim.tbl_contains(types, type(value)) then
    error(('kgent: option %s must be a %s, not %s'):format(name, table.concat(types, ' or '), type(value)), 3)
  end
end

---@param opts table?
---@return kgent.Config
function M.setup(opts)
  opts = opts or {}
  local o = vim.tbl_deep_extend('force', M.defaults(), opts)
  -- A list is replaced, never merged index by index.
  if opts.cmd then
    o.cmd = type(opts.cmd) == 'string' and { opts.cmd } or vim.deepcopy(opts.cmd)
  end
  check('cmd', o.cmd, 'table')
  check('env', o.env, 'table')
  check('provider', o.provider, 'string', true)
  check('model', o.model, 'string', true)
  check('base_url', o.base_url, 'string', true)
  check('mode', o.mode, 'string', true)
  check('api_key', o.api_key, 'function', true)
  check('approval_timeout', o.approval_timeout, 'number', true)
  check('max_turns', o.max_turns, 'number', true)
  check('trust_project_extensions', o.trust_project_extensions, 'boolean', true)
  check('workspace', o.workspace, { 'string', 'function' }, true)
  check('log_file', o.log_file, { 'string', 'boolean' })
  check('log_level', o.log_level, 'string', true)
  check('reload_changed', o.reload_changed, 'boolean')
  check('buffers', o.buffers, 'boolean')
  check('diagnostics', o.diagnostics, 'boolean')
  check('fs_timeout', o.fs_timeout, 'number', true)
  check('review', o.review, 'table')
  check('review.keys', o.review.keys, 'table')
  check('transcript', o.transcript, 'table')
  check('prewarm', o.prewarm, 'boolean')
  check('approval_keys', o.approval_keys, 'table')
  check('approval_diff_lines', o.approval_diff_lines, 'number')
  check('chat', o.chat, 'table')
  if o.approval ~= 'inline' and o.approval ~= 'select' then
    error(('kgent: approval must be "inline" or "select", not %s'):format(vim.inspect(o.approval)))
  end
  if o.chat.busy ~= 'steer' and o.chat.busy ~= 'follow_up' then
    error(('kgent: chat.busy must be "steer" or "follow_up", not %s'):format(vim.inspect(o.chat.busy)))
  end
  if #o.cmd == 0 then
    error('kgent: cmd must name the daemon, e.g. { "kgent", "serve", "--stdio" }')
  end
  if o.log_file == true then
    o.log_file = M.defaults().log_file
  end
  if o.mode and not modes[o.mode:lower():gsub('-', '_')] then
    -- The daemon also accepts aliases (interactive, allow_all); only warn.
    vim.notify(('kgent: unknown mode %q (plan, ask, auto, full, risk_based)'):format(o.mode), vim.log.levels.WARN)
  end
  if not layouts[o.transcript.layout] then
    error(('kgent: transcript.layout must be vsplit, split, tab, float or none, not %q'):format(o.transcript.layout))
  end
  if o.fs_timeout and o.fs_timeout <= 0 then
    error("kgent: fs_timeout must be a number of seconds > 0 (or nil for the daemon's default)")
  end
  if o.approval_timeout and o.approval_timeout <= 0 then
    error('kgent: approval_timeout must be a number of seconds > 0 (or nil to wait)')
  end
  if o.max_turns and (o.max_turns < 1 or o.max_turns % 1 ~= 0) then
    error("kgent: max_turns must be an integer >= 1 (or nil for the daemon's default)")
  end
  M.options = o
  return o
end

--- The workspace runs use: an absolute, normalised directory.
---@return string
function M.workspace()
  local w = M.options.workspace
  if type(w) == 'function' then
    w = w()
  end
  w = w or vim.fn.getcwd()
  local dir = vim.fs.normalize(vim.fn.fnamemodify(w, ':p'))
  return (dir:gsub('(.)/$', '%1'))
end

--- Settings for `initialize` (protocol.md: initialize.settings). The key, if a function gives one, goes over the
--- pipe only: never into a file, an event, the environment or a log of this plugin.
---@return table
function M.settings()
  local o = M.options
  local s = {}
  s.provider = o.provider
  s.model = o.model
  s.baseUrl = o.base_url
  s.mode = o.mode
  s.approvalTimeout = o.approval_timeout
  s.maxTurns = o.max_turns
  s.fsTimeout = o.fs_timeout
  -- nil: the daemon asks the trust file (`kgent extensions --trust`), for extensions and project rules alike.
  s.trustProjectExtensions = o.trust_project_extensions
  if o.api_key then
    local ok, key = pcall(o.api_key)
    if not ok then
      vim.notify('kgent: api_key function failed: ' .. tostring(key), vim.log.levels.ERROR)
    elseif type(key) == 'string' and key ~= '' then
      s.apiKey = key
    end
  end
  return next(s) and s or vim.empty_dict()
end

--- Capabilities for `initialize`: loaded buffers are served unless buffers = false (protocol.md § Host-owned files),
--- diagnostics unless diagnostics = false (§ Diagnostics).
---@return table
function M.capabilities()
  local caps = {}
  if M.options.buffers then
    caps.fs = { readTextFile = true, writeTextFile = true, saveFiles = true }
  end
  if M.options.diagnostics then
    caps.diagnostics = true -- protocol.md § Diagnostics: kgent.diagnostics answers from vim.diagnostic
  end
  return next(caps) and caps or vim.empty_dict()
end

--- The daemon's environment additions.
---@return table<string,string>
function M.env()
  local o = M.options
  local env = vim.deepcopy(o.env)
  if o.log_file and env.KGENT_LOG_FILE == nil then
    vim.fn.mkdir(vim.fs.dirname(o.log_file), 'p')
    env.KGENT_LOG_FILE = o.log_file
  end
  if o.log_level and env.KGENT_LOG_LEVEL == nil then
    env.KGENT_LOG_LEVEL = o.log_level
  end
  return env
end

return M
