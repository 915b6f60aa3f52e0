-- :Kgent rules — the permission rules in effect for the workspace (agent/rules): the user's file, the project's rules
-- (its .kgent/config.toml, and your own file for it, where new ones go while the project is not trusted) and the
-- session rules of its sessions, by scope, in a scratch buffer where `dd` removes the
-- rule under the cursor (agent/removeRule), `a` adds one and `R` reloads; `:Kgent rules add [--deny]
-- [--session|--project|--user] RULE` and `:Kgent rules remove …` do the same from the command line (agent/addRule).
local config = require('kgent.config')
local daemon = require('kgent.daemon')
local rpc = require('kgent.rpc')
local S = require('kgent.state')
local md = require('kgent.md')

local M = {}

local SCOPES = { 'session', 'project', 'user' }
local SCOPE_TITLE = {
  session = 'Session rules (until the session ends)',
  project = 'Project rules (this project only)',
  user = 'User rules (every project)',
}

--- The rule items shown in the buffer, by 0-based row: buffer → row → item.
---@type table<integer, table<integer, table>>
M.rows = {}

local function notify_err(err)
  vim.notify('kgent: ' .. rpc.format_error(err), vim.log.levels.ERROR)
end

--- agent/rules for `workspace` (the configured one): cb(err, result).
---@param cb fun(err: table?, res: table?)
function M.fetch(cb, workspace)
  daemon.with_conn(function(conn)
    conn:request('agent/rules', { workspace = workspace or config.workspace() }, cb)
  end)
end

--- The buffer's lines for an agent/rules result, and the rule item of each line (by 1-based line number).
---@param res table
---@return string[] lines, table<integer, table> items
function M.format(res, workspace)
  local lines = {
    ('Kgent rules for %s'):format(workspace),
    '  dd removes the rule under the cursor · a adds one · R reloads · q closes · deny wins over allow',
  }
  local files = res.files or {}
  if files.project then
    lines[#lines + 1] = ('  project file: %s%s'):format(
      files.project,
      res.projectTrusted and '' or '  (project not trusted: its allows are ignored, its denies kept)'
    )
  end
  if files.personal and not res.projectTrusted then
    lines[#lines + 1] = '  your project rules (they count): ' .. files.personal
  end
  if files.user then
    lines[#lines + 1] = '  user file:    ' .. files.user
  end
  local items = {}
  for _, scope in ipairs(SCOPES) do
    lines[#lines + 1] = ''
    lines[#lines + 1] = '## ' .. SCOPE_TITLE[scope]
    local n = 0
    for _, r in ipairs(res.rules or {}) do
      if r.scope == scope then
        n = n + 1
        local line = ('  %-5s  %s'):format(r.decision or '?', md.code(r.rule or '?'))
        if r.text and r.text ~= '' then
          line = line .. '   — ' .. r.text
        end
        if r.sessionId then
          line = line .. ('   [session %s]'):format(r.sessionId:sub(1, 8))
        end
        lines[#lines + 1] = line
        items[#lines] = r
      end
    end
    if n == 0 then
      lines[#lines + 1] = '  (none)'
    end
  end
  return lines, items
end

local function render(buf, res, workspace)
  if not vim.api.nvim_buf_is_valid(buf) then
    return
  end
  local lines, items = M.format(res, workspace)
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
  M.rows[buf] = items
end

--- Reload the rules buffer `buf`; then call `done` (if given).
function M.refresh(buf, done)
  local workspace = vim.b[buf].kgent_rules_workspace or config.workspace()
  M.fetch(function(err, res)
    vim.schedule(function()
      if err then
        notify_err(err)
      else
        render(buf, res, workspace)
      end
      if done then
        done(err, res)
      end
    end)
  end, workspace)
end

--- The rules buffer (created on first use).
local function rules_buf()
  for b, _ in pairs(M.rows) do
    if vim.api.nvim_buf_is_valid(b) then
      return b
    end
    M.rows[b] = nil
  end
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'hide'
  vim.bo[buf].swapfile = false
  vim.bo[buf].filetype = 'markdown'
  pcall(vim.api.nvim_buf_set_name, buf, 'kgent://rules')
  M.rows[buf] = {}
  local function map(lhs, fn, desc)
    vim.keymap.set('n', lhs, fn, { buffer = buf, nowait = true, desc = 'Kgent rules: ' .. desc })
  end
  map('dd', function()
    M.remove_at(buf, vim.api.nvim_win_get_cursor(0)[1])
  end, 'remove the rule under the cursor')
  map('a', function()
    vim.ui.input({ prompt = 'Add rule ([--deny] [--session|--project|--user] RULE): ' }, function(s)
      if s and s ~= '' then
        M.add(s)
      end
    end)
  end, 'add a rule')
  map('R', function()
    M.refresh(buf)
  end, 'reload')
  map('q', '<cmd>close<cr>', 'close')
  return buf
end

--- Open (or reload) the rules buffer in a split; `done(err, res)` once it shows the daemon's answer.
function M.open(done)
  local buf = rules_buf()
  vim.b[buf].kgent_rules_workspace = config.workspace()
  local win = vim.fn.bufwinid(buf)
  if win == -1 then
    vim.cmd('botright split')
    vim.api.nvim_win_set_buf(0, buf)
  else
    vim.api.nvim_set_current_win(win)
  end
  M.refresh(buf, done)
  return buf
end

--- Reload the rules buffer if it is open.
local function refresh_open(done)
  for b, _ in pairs(M.rows) do
    if vim.api.nvim_buf_is_valid(b) then
      return M.refresh(b, done)
    end
  end
  if done then
    done()
  end
end

--- Remove the rule on line `lnum` (1-based) of the rules buffer.
function M.remove_at(buf, lnum, done)
  local item = (M.rows[buf] or {})[lnum]
  if not item then
    return vim.notify('kgent: no rule on this line', vim.log.levels.INFO)
  end
  M.remove_item(item, done)
end

function M.remove_item(item, done)
  local params = {
    workspace = config.workspace(),
    rule = item.rule,
    decision = item.decision,
    scope = item.scope,
    sessionId = item.sessionId,
  }
  daemon.with_conn(function(conn)
    conn:request('agent/removeRule', params, function(err, res)
      vim.schedule(function()
        if err then
          notify_err(err)
        elseif res and res.removed then
          vim.notify(('kgent: removed %s rule %s (%s)'):format(item.decision, item.rule, item.scope))
        else
          vim.notify(
            ('kgent: no %s rule %s (%s) to remove'):format(item.decision, item.rule, item.scope),
            vim.log.levels.WARN
          )
        end
        refresh_open(done)
      end)
    end)
  end)
end

--- Parse `[--allow|--deny] [--session|--project|--user] RULE`.
---@param args string
---@return table? spec {rule, decision, scope}, string? err
function M.parse(args)
  local decision, scope = 'allow', 'project'
  local rest = {}
  local words = vim.split(vim.trim(args or ''), '%s+', { trimempty = true })
  local i = 1
  while i <= #words and vim.startswith(words[i], '--') do
    local w = words[i]
    if w == '--deny' or w == '--allow' then
      decision = w:sub(3)
    elseif w == '--session' or w == '--project' or w == '--user' then
      scope = w:sub(3)
    else
      return nil, ('unknown flag %s (--deny, --allow, --session, --project, --user)'):format(w)
    end
    i = i + 1
  end
  for j = i, #words do
    rest[#rest + 1] = words[j]
  end
  local rule = table.concat(rest, ' ')
  if rule == '' then
    return nil, 'no rule given: e.g. :Kgent rules add bash(npm test *)'
  end
  return { rule = rule, decision = decision, scope = scope }
end

--- :Kgent rules add … — agent/addRule; `done(err, res)` after the answer.
function M.add(args, done)
  local spec, perr = M.parse(args)
  if not spec then
    vim.notify('kgent: ' .. perr, vim.log.levels.ERROR)
    return done and done({ message = perr })
  end
  local params = { workspace = config.workspace(), rule = spec.rule, decision = spec.decision, scope = spec.scope }
  if spec.scope == 'session' then
    params.sessionId = S.state.session_id
    if not params.sessionId then
      local msg = 'no current session for a session rule (start or resume one, or use --project / --user)'
      vim.notify('kgent: ' .. msg, vim.log.levels.ERROR)
      return done and done({ message = msg })
    end
  end
  daemon.with_conn(function(conn)
    conn:request('agent/addRule', params, function(err, res)
      vim.schedule(function()
        if err then
          vim.notify(
            ('kgent: cannot add %s rule %s: %s'):format(spec.decision, spec.rule, rpc.format_error(err)),
            vim.log.levels.ERROR
          )
        else
          local r = res and res.rule or spec
          vim.notify(
            ('kgent: added %s rule %s (%s)%s'):format(r.decision, r.rule, r.scope, r.text and (': ' .. r.text) or '')
          )
        end
        refresh_open(function()
          if done then
            done(err, res)
          end
        end)
      end)
    end)
  end)
end

--- :Kgent rules remove … — the rule given as to add.
function M.remove(args, done)
  local spec, perr = M.parse(args)
  if not spec then
    vim.notify('kgent: ' .. perr, vim.log.levels.ERROR)
    return done and done({ message = perr })
  end
  spec.sessionId = spec.scope == 'session' and S.state.session_id or nil
  M.remove_item(spec, done)
end

--- The :Kgent rules subcommand.
function M.command(args)
  local sub, rest = (args or ''):match('^%s*(%S*)%s*(.-)%s*$')
  if sub == '' or sub == 'list' then
    return M.open()
  elseif sub == 'add' then
    return M.add(rest)
  elseif sub == 'remove' then
    return M.remove(rest)
  end
  vim.notify(('kgent: :Kgent rules takes nothing, "add" or "remove", not %q'):format(sub), vim.log.levels.ERROR)
end

local TOOLS = { 'bash(', 'edit(', 'write(', 'read(', 'web_fetch(' }

--- Completion after ":Kgent rules ": the subcommands, then the flags and the rule's tool.
---@param words string[]  the words after ":Kgent" (words[1] == "rules")
function M.complete(words, arglead)
  local out = {}
  local function offer(list)
    for _, w in ipairs(list) do
      if vim.startswith(w, arglead) then
        out[#out + 1] = w
      end
    end
  end
  if #words == 2 then
    offer({ 'add', 'list', 'remove' })
  elseif words[2] == 'add' or words[2] == 'remove' then
    offer({ '--deny', '--allow', '--session', '--project', '--user' })
    offer(TOOLS)
  end
  return out
end

return M
