-- :Kgent {subcommand} [args] — parsing, completion, and the visual range.
local M = {}

local function kgent()
  return require('kgent')
end

---@class kgent.Subcommand
---@field desc string
---@field args string?  shown in the usage
---@field run fun(args: string, o: table)

---@type table<string, kgent.Subcommand>
M.subcommands = {
  run = {
    args = '{prompt}',
    desc = 'run {prompt} in the current session (with a range: the lines are sent as context)',
    run = function(args, o)
      local opts = {}
      if o.range > 0 then
        opts.selection = { buf = vim.api.nvim_get_current_buf(), line1 = o.line1, line2 = o.line2 }
      end
      kgent().run(args, opts)
    end,
  },
  new = {
    args = '[prompt]',
    desc = 'start a new session (and run [prompt] in it)',
    run = function(args, o)
      if args == '' then
        return kgent().new_session()
      end
      local opts = { new_session = true }
      if o.range > 0 then
        opts.selection = { buf = vim.api.nvim_get_current_buf(), line1 = o.line1, line2 = o.line2 }
      end
      kgent().run(args, opts)
    end,
  },
  cancel = {
    desc = 'cancel the current run',
    run = function()
      kgent().cancel()
    end,
  },
  steer = {
    args = '{text}',
    desc = 'tell the current run {text} after its current tool batch',
    run = function(args)
      kgent().steer(args)
    end,
  },
  followup = {
    args = '{text}',
    desc = 'queue {text} for when the current run would settle',
    run = function(args)
      kgent().follow_up(args)
    end,
  },
  continue = {
    args = '[prompt]',
    desc = "continue the workspace's most recent session (the CLI's -c); run {prompt} in it if given",
    run = function(args)
      kgent().resume({ latest = true, prompt = args })
    end,
  },
  resume = {
    args = '[session-id]',
    desc = 'pick a session of the workspace (or give its id) and continue it',
    run = function(args)
      local id, prompt = args:match('^(%S+)%s*(.*)$')
      kgent().resume({ session_id = id, prompt = prompt })
    end,
  },
  review = {
    args = '[run-id]',
    desc = "review the session's changes hunk by hunk (or one run's): quickfix list and a diff view",
    run = function(args)
      kgent().review(args ~= '' and args or nil)
    end,
  },
  sessions = {
    desc = "list the workspace's sessions",
    run = function()
      kgent().sessions(function(err, sessions)
        if err then
          return vim.notify('kgent: ' .. require('kgent.rpc').format_error(err), vim.log.levels.ERROR)
        end
        M.last_sessions = sessions
        if #sessions == 0 then
          return vim.notify('kgent: no sessions for ' .. require('kgent.config').workspace())
        end
        local chunks = { { 'Kgent sessions (most recent first; :Kgent resume {id}):\n', 'Title' } }
        for _, s in ipairs(sessions) do
          chunks[#chunks + 1] = { kgent().format_session(s) .. '\n' }
        end
        vim.api.nvim_echo(chunks, true, {})
      end)
    end,
  },
  instructions = {
    desc = "the current session's AGENTS.md files and skills: pick one to open it",
    run = function()
      require('kgent.instructions').open()
    end,
  },
  chat = {
    desc = 'open the chat under the transcript (with a range: the lines go with the next message)',
    run = function(_, o)
      local opts = {}
      if o.range > 0 then
        opts.selection = { buf = vim.api.nvim_get_current_buf(), line1 = o.line1, line2 = o.line2 }
      end
      kgent().chat(opts)
    end,
  },
  transcripts = {
    desc = "pick a session's transcript (this Neovim's and the workspace's past sessions)",
    run = function()
      kgent().transcripts()
    end,
  },
  queue = {
    args = '[clear]',
    desc = 'show what the live run has queued (steering, follow-ups), or drop it (clear)',
    run = function(args)
      if args == 'clear' then
        return kgent().clear_queue()
      elseif args ~= '' then
        return vim.notify(('kgent: :Kgent queue takes nothing or "clear", not %q'):format(args), vim.log.levels.ERROR)
      end
      local chat = require('kgent.chat').state
      if #chat.followups + #chat.steering == 0 then
        return vim.notify('kgent: no follow-up is queued')
      end
      local lines = { 'kgent: queued in the run (:Kgent queue clear drops them):' }
      for _, m in ipairs(chat.steering) do
        lines[#lines + 1] = '  steering: ' .. m:match('^[^\n]*')
      end
      for i, m in ipairs(chat.followups) do
        lines[#lines + 1] = ('  %d. %s'):format(i, m:match('^[^\n]*'))
      end
      vim.notify(table.concat(lines, '\n'))
    end,
  },
  mode = {
    args = '[mode]',
    desc = 'the permission mode of the next runs (plan, ask, auto, full); without one: pick',
    run = function(args)
      require('kgent.choose').mode(args)
    end,
  },
  provider = {
    args = '[name]',
    desc = 'the provider of the next runs (its first known model); without one: pick',
    run = function(args)
      require('kgent.choose').provider(args)
    end,
  },
  model = {
    args = '[[provider/]id]',
    desc = 'the model of the next runs (any id the provider accepts); without one: pick or type',
    run = function(args)
      require('kgent.choose').model(args)
    end,
  },
  fork = {
    desc = "pick one of the session's messages: the session continues from before it, the message comes back to edit",
    run = function()
      require('kgent.choose').fork()
    end,
  },
  rewind = {
    desc = "pick one of the session's messages: the files the agent changed since come back, the session forks before it",
    run = function()
      require('kgent.rewind').rewind()
    end,
  },
  export = {
    args = '[md|html|json]',
    desc = 'the current session as Markdown (default), HTML or JSON in a new buffer (:w {path} saves it)',
    run = function(args)
      kgent().export(args)
    end,
  },
  restart = {
    desc = 'start the daemon again (after it died, or to apply new settings)',
    run = function()
      kgent().restart()
    end,
  },
  log = {
    desc = "open the daemon's log",
    run = function()
      kgent().log()
    end,
  },
  open = {
    desc = 'show the transcript',
    run = function()
      kgent().open()
    end,
  },
  rules = {
    args = '[add|remove [--deny] [--session|--project|--user] RULE]',
    desc = 'the permission rules of the workspace by scope (dd removes); add or remove one',
    run = function(args)
      require('kgent.rules').command(args)
    end,
  },
  stop = {
    desc = 'stop the daemon (cancels its runs)',
    run = function()
      kgent().stop()
    end,
  },
}

---@type table[]?  the last :Kgent sessions answer (for completing :Kgent resume)
M.last_sessions = nil

function M.usage()
  local names = vim.tbl_keys(M.subcommands)
  table.sort(names)
  local lines = { 'Usage: :Kgent {subcommand}' }
  for _, n in ipairs(names) do
    local s = M.subcommands[n]
    lines[#lines + 1] = ('  %-22s %s'):format(n .. (s.args and (' ' .. s.args) or ''), s.desc)
  end
  return table.concat(lines, '\n')
end

--- The :Kgent command.
---@param o table  nvim_create_user_command's argument
function M.dispatch(o)
  local name, rest = (o.args or ''):match('^%s*(%S*)%s*(.-)%s*$')
  if name == '' then
    return vim.notify(M.usage(), vim.log.levels.INFO)
  end
  local sub = M.subcommands[name]
  if not sub then
    return vim.notify(('kgent: unknown subcommand %q\n%s'):format(name, M.usage()), vim.log.levels.ERROR)
  end
  sub.run(rest, o)
end

--- Completion: subcommand names, then session ids for `resume`.
function M.complete(arglead, cmdline, cursorpos)
  local before = cmdline:sub(1, cursorpos):gsub('^%s+', '')
  local args = before:match('^%S+%s+(.*)$') -- what follows "[range]Kgent"
  if not args then
    return {}
  end
  local words = vim.split(args, '%s+', { trimempty = false })
  if #words <= 1 then
    local out = {}
    for name in pairs(M.subcommands) do
      if name:find(arglead, 1, true) == 1 then
        out[#out + 1] = name
      end
    end
    table.sort(out)
    return out
  end
  if (words[1] == 'mode' or words[1] == 'model' or words[1] == 'provider') and #words == 2 then
    return require('kgent.choose').complete(words[1], arglead)
  end
  if words[1] == 'export' and #words == 2 then
    return require('kgent.export').complete(arglead)
  end
  if words[1] == 'queue' and #words == 2 then
    return vim.startswith('clear', arglead) and { 'clear' } or {}
  end
  if words[1] == 'rules' then
    return require('kgent.rules').complete(words, arglead)
  end
  if words[1] == 'resume' and #words == 2 and M.last_sessions then
    local out = {}
    for _, s in ipairs(M.last_sessions) do
      if s.sessionId:find(arglead, 1, true) == 1 then
        out[#out + 1] = s.sessionId
      end
    end
    return out
  end
  return {}
end

function M.register()
  pcall(vim.api.nvim_del_user_command, 'Kgent')
  vim.api.nvim_create_user_command('Kgent', M.dispatch, {
    nargs = '*',
    range = true,
    complete = M.complete,
    desc = 'Kgent coding agent: run, cancel, steer, followup, resume, sessions, log',
  })
end

return M
