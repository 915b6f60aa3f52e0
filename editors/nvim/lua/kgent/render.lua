-- What each protocol event writes into the transcript (kgent.transcript): the run header, the prompt, assistant
-- text and thinking (as a quote), one line per tool call with its status and approval, tool results, and the
-- summary with the changed files (<CR> opens them) and the patch; and a resumed session's history.
local config = require('kgent.config')
local transcript = require('kgent.transcript')

local M = {}

local function first_line(s)
  s = s or ''
  return (s:match('^[^\n]*'))
end

-- Tool call ids are unique within a run only (runs may interleave): key the transcript's lines by both.
local function tool_key(run_id, tool_call_id)
  return tostring(run_id or '') .. '\0' .. tostring(tool_call_id or '')
end

local PLAN_MARK = { completed = '[x]', in_progress = '[~]', pending = '[ ]' }
-- The plan block of each run (kgent.blocks handle), rewritten in place by each `plan` event.
local plans = {}
-- The "queued —" line of each run (kgent.blocks handle): one line, rewritten by each `queue_update`.
local queues = {}
-- The `context` ({tokens, window}) of each live run's latest model call: the run's end line says how full it was.
local contexts = {}

--- "**Plan** · 1/3 done" and one markdown checkbox line per entry ([~] in progress, "(high)" for high priority).
function M.plan_lines(entries)
  local done = 0
  local lines = {}
  for _, e in ipairs(entries or {}) do
    done = done + (e.status == 'completed' and 1 or 0)
    local prio = e.priority == 'high' and ' (high)' or ''
    lines[#lines + 1] = ('- %s %s%s'):format(PLAN_MARK[e.status] or '[ ]', first_line(e.content), prio)
  end
  table.insert(lines, 1, ('**Plan** · %d/%d done'):format(done, #lines))
  if #lines == 1 then
    lines[2] = '_(empty)_'
  end
  return lines
end

local function show_plan(run_id, entries)
  local blocks = require('kgent.blocks')
  local lines = M.plan_lines(entries)
  local b = plans[run_id]
  if not (b and blocks.replace(b, lines, 'plan')) then
    transcript.end_stream()
    plans[run_id] = blocks.add_exact(lines, 'plan')
  end
end

--- "1200 in (900 cached) / 40 out tokens · ≈ $0.0012": input counts every input token (plain, read from and
--- written to the prompt cache); the cost shows only when the daemon knows the model's price.
local function fmt_tokens(u)
  if type(u) ~= 'table' then
    return nil
  end
  local cached = u.cacheReadTokens or 0
  local input = (u.inputTokens or 0) + cached + (u.cacheWriteTokens or 0)
  local text = ('%d in%s / %d out tokens'):format(
    input,
    cached > 0 and (' (%d cached)'):format(cached) or '',
    u.outputTokens or 0
  )
  if type(u.cost) == 'table' and type(u.cost.amount) == 'number' then
    local sign = u.cost.currency == 'USD' and '$' or ((u.cost.currency or '') .. ' ')
    text = text .. (' · ≈ %s%.4f'):format(sign, u.cost.amount)
  end
  return text
end

--- "context 2.1k of 33k tokens (6%)": how full the model's context was after a call — the usage event's
--- `context.text`, shown as the server words it (protocol.md: a host computes neither the share nor the text).
function M.fmt_context(c)
  if type(c) ~= 'table' or type(c.text) ~= 'string' or c.text == '' then
    return nil
  end
  return c.text
end

--- "🖼 shot.png · image/png · 70 B": one line per image a message carried (user_message's and a stored user
--- message's `images`: the session keeps their bytes, the transcript names them as the web client and VS Code do).
---@param images table[]?
---@return string[]
function M.image_lines(images)
  local out = {}
  for _, im in ipairs(type(images) == 'table' and images or {}) do
    local size = tonumber(im.size)
    local text = size == nil and '?'
      or size < 1024 and ('%d B'):format(size)
      or size < 1024 * 1024 and ('%d KiB'):format(math.ceil(size / 1024))
      or ('%.1f MiB'):format(size / (1024 * 1024))
    out[#out + 1] = ('🖼 %s · %s · %s'):format(im.name or 'image', im.mimeType or '?', text)
  end
  return out
end

---@param run {id: string, session_id: string, workspace: string?}
---@param ev table
--- A sub-agent's run (the `task` tool; its events carry parentRunId): one line when it starts and ends, its tool
--- calls labelled with its name; its text and prompt stay out (the task's result line carries its answer).
local SUB_SHOWN = {
  run_start = true,
  run_end = true,
  tool_call = true,
  tool_update = true,
  permission_request = true,
  permission_resolved = true,
  plan = true,
}

local function sub_event(run, ev)
  if ev.type == 'run_start' then
    run.agent = ev.agent or 'sub-agent'
    transcript.end_stream()
    transcript.append_lines({ ('↳ **Sub-agent: %s** started (%s)'):format(run.agent, run.id) }, 'tool')
  elseif ev.type == 'run_end' then
    M.close_tools(run, ev)
    transcript.append_lines({
      ('↳ **Sub-agent: %s** %s · %d turn%s'):format(
        run.agent or 'sub-agent',
        ev.status or '?',
        ev.turns or 0,
        ev.turns == 1 and '' or 's'
      ),
    }, 'tool')
  end
end

---@param run {id: string, session_id: string, workspace: string?, parent: string?, agent: string?}
---@param ev table
function M.on_event(run, ev)
  local ty = ev.type
  local tr = config.options.transcript
  transcript.use(run.session_id or run.key)
  transcript.add_run(run.id)
  if run.parent then
    if not SUB_SHOWN[ty] then
      return
    elseif ty == 'run_start' or ty == 'run_end' then
      return sub_event(run, ev)
    end
  end
  if ty == 'run_start' then
    local head = ('## Run %s · %s/%s · %s'):format(run.id, ev.provider or '?', ev.model or '?', ev.mode or '?')
    local lines = { head, ('_session %s · %s_'):format(ev.sessionId or run.session_id or '?', ev.workspace or '') }
    transcript.append_lines(lines, 'header')
  elseif ty == 'user_message' then
    local who = ev.source == 'prompt' and '**You:**' or ('**You (%s):**'):format((ev.source or ''):gsub('_', '-'))
    local text = vim.split(ev.text or '', '\n', { plain = true })
    local max = 20
    local lines = { who .. ' ' .. (text[1] or '') }
    for i = 2, math.min(#text, max) do
      lines[#lines + 1] = text[i]
    end
    if #text > max then
      lines[#lines + 1] = ('… (%d more lines)'):format(#text - max)
    end
    vim.list_extend(lines, M.image_lines(ev.images))
    transcript.append_lines(lines, 'user')
  elseif ty == 'message_delta' then
    if ev.kind == 'thinking' then
      if tr.show_thinking then
        transcript.append_stream(ev.delta, 'thinking')
      end
    else
      transcript.append_stream(ev.delta, 'text')
    end
  elseif ty == 'message_end' then
    local m = ev.message or {}
    if m.error then
      transcript.note(
        'model error: ' .. tostring(type(m.error) == 'table' and (m.error.message or vim.inspect(m.error)) or m.error)
      )
    end
    transcript.end_stream()
  elseif ty == 'tool_call' then
    local title = ev.title or ev.name or 'tool'
    if ev.command and not title:find(ev.command, 1, true) then
      title = title .. ': ' .. require('kgent.md').code(first_line(ev.command))
    end
    if run.parent then
      title = ('↳ %s: %s'):format(run.agent or 'sub-agent', title)
    end
    local path = ev.path or (type(ev.args) == 'table' and type(ev.args.path) == 'string' and ev.args.path) or nil
    transcript.add_tool(
      tool_key(run.id, ev.toolCallId),
      { title = title, status = 'pending', run = run.id, path = path, kind = ev.kind, name = ev.name }
    )
    require('kgent.approval_inline').tool_added(tool_key(run.id, ev.toolCallId))
  elseif ty == 'tool_update' then
    local key = tool_key(run.id, ev.toolCallId)
    local t = transcript.tool(key)
    if t then
      -- the daemon ends a call that a cancel cut short with {status = "failed", output = "cancelled: ..."}
      local cut_short = ev.status == 'failed'
        and type(ev.output) == 'string'
        and vim.startswith(ev.output, 'cancelled:')
      t.status = cut_short and 'cancelled' or ev.status or t.status
      transcript.update_tool(key)
      -- todo_write's result is the plan, which its plan block shows already
      local shown = t.name == 'todo_write' and ev.status == 'completed'
      if (ev.status == 'completed' or ev.status == 'failed') and not cut_short and not shown then
        transcript.tool_output(key, ev.output)
      elseif ev.status == 'in_progress' and ev.output then
        transcript.live_output(key, ev.output) -- a running command's output so far
      end
    end
  elseif ty == 'permission_request' then
    local key = tool_key(run.id, (ev.toolCall or {}).toolCallId)
    local t = transcript.tool(key)
    if t then
      t.approval = 'awaiting approval'
      transcript.update_tool(key)
    end
  elseif ty == 'permission_resolved' then
    local key = tool_key(run.id, ev.toolCallId)
    local t = transcript.tool(key)
    if t then
      -- the server's words for the decision ("always allowed in this project", "allowed by the project rule `…`")
      t.approval = ev.label or (ev.approved and 'allowed' or 'rejected')
      transcript.update_tool(key)
    end
  elseif ty == 'queue_update' then
    local parts = {}
    for _, s in ipairs(ev.steering or {}) do
      parts[#parts + 1] = 'steer: ' .. first_line(s)
    end
    for _, s in ipairs(ev.followUp or {}) do
      parts[#parts + 1] = 'follow-up: ' .. first_line(s)
    end
    local blocks = require('kgent.blocks')
    local b = queues[run.id]
    if #parts == 0 then
      if b then
        blocks.remove(b)
        queues[run.id] = nil
      end
    else
      local line = { '_queued — ' .. table.concat(parts, '; ') .. '_' }
      if not (b and blocks.replace(b, line, 'note')) then
        transcript.end_stream()
        queues[run.id] = blocks.add_exact(line, 'note')
      end
    end
  elseif ty == 'retry' then
    transcript.note(
      ('retrying (%s/%s) in %ss: %s'):format(
        ev.attempt or '?',
        ev.maxAttempts or '?',
        ev.delaySeconds or '?',
        first_line(tostring(ev.error or ''))
      )
    )
  elseif ty == 'compaction' then
    transcript.note(('compaction %s (%s)'):format(ev.status or '?', ev.trigger or '?'))
  elseif ty == 'plan' then
    show_plan(run.id, ev.entries)
  elseif ty == 'usage' then
    contexts[run.id] = ev.context or contexts[run.id] -- none on a sub-agent's run counted as one turn
  elseif ty == 'run_end' then
    M.run_end(run, ev)
  end
  -- Other event types (unknown future ones) are not shown.
end

--- An approval prompt closed without a permission_resolved event (yet): show that on its tool line.
---@param params table  the agent/permission params
---@param how string  "answered" | "dismissed" | "withdrawn"
function M.permission_done(params, how)
  if params.sessionId then
    transcript.use(params.sessionId)
  end
  local key = tool_key(params.runId, (params.toolCall or {}).toolCallId)
  local t = transcript.tool(key)
  if t and how == 'withdrawn' and t.approval == 'awaiting approval' then
    t.approval = 'prompt withdrawn'
    transcript.update_tool(key)
  end
end

---@param run {id: string, workspace: string?}
---@param ev table  the run_end event
--- A call still pending or running gets no final tool_update when the run is cancelled (e.g. while its approval
--- was open): close its line here.
function M.close_tools(run, ev)
  plans[run.id] = nil
  queues[run.id] = nil
  for key, t in pairs(transcript.tools()) do
    if t.run == run.id and (t.status == 'pending' or t.status == 'in_progress') then
      t.status = ev.status == 'cancelled' and 'cancelled' or 'unfinished'
      transcript.update_tool(key)
    end
  end
end

function M.run_end(run, ev)
  M.close_tools(run, ev)
  local status = ev.status or '?'
  local head = ('**Run %s** · %s'):format(status, ev.stopReason or '?')
  if ev.turns then
    head = head .. (' · %d turn%s'):format(ev.turns, ev.turns == 1 and '' or 's')
  end
  local tok = fmt_tokens(ev.usage)
  if tok then
    head = head .. ' · ' .. tok
  end
  local ctx = M.fmt_context(contexts[run.id])
  contexts[run.id] = nil
  if ctx then
    head = head .. ' · ' .. ctx
  end
  local lines = { head }
  if type(ev.error) == 'table' then
    lines[#lines + 1] = ('Error (%s): %s'):format(ev.error.code or '?', ev.error.message or '')
  end
  local changed = ev.changedPaths or {}
  local abs = {}
  for i, p in ipairs(changed) do
    abs[i] = p:sub(1, 1) == '/' and p or ((run.workspace or vim.fn.getcwd()) .. '/' .. p)
  end
  local first_file_row
  if #changed > 0 then
    lines[#lines + 1] = ''
    lines[#lines + 1] = 'Changed files (<CR> opens):'
    first_file_row = #lines
    for _, p in ipairs(abs) do
      lines[#lines + 1] = '- ' .. p
    end
  end
  if ev.patch and ev.patch ~= '' then
    lines[#lines + 1] = ''
    vim.list_extend(lines, require('kgent.md').fenced(require('kgent.approval').split_text(ev.patch), 'diff'))
  end
  local row = transcript.append_lines(lines, 'summary')
  if first_file_row then
    for i, p in ipairs(abs) do
      transcript.add_file(row + first_file_row + i - 1, p)
    end
  end
end

--- The daemon died under `run`: its pending and running tool calls are lost. Returns the paths those calls (and
--- the run's finished edits) touched, for reloading.
---@param run {id: string, session_id: string?, key: string?}
---@param why string
---@return string[]
function M.lost(run, why)
  transcript.use(run.session_id or run.key)
  local paths, seen = {}, {}
  for key, t in pairs(transcript.tools()) do
    if t.run == run.id then
      if t.status == 'pending' or t.status == 'in_progress' then
        t.status = 'lost'
        t.approval = nil
        transcript.update_tool(key)
      end
      if t.path and t.kind ~= 'read' and t.kind ~= 'search' and not seen[t.path] then
        seen[t.path] = true
        paths[#paths + 1] = t.path
      end
    end
  end
  transcript.append_lines({
    ('**Run %s lost** · %s'):format(run.id, why),
    '_:Kgent restart starts the daemon again; :Kgent run continues the session_',
  }, 'lost')
  return paths
end

--- What a call is about, from its arguments: "read src/a.py", "bash: `make test`", "grep TODO".
---@param name string
---@param args table?
---@return string
function M.call_title(name, args)
  args = type(args) == 'table' and args or {}
  if type(args.command) == 'string' then
    return ('%s: %s'):format(name, require('kgent.md').code(first_line(args.command)))
  end
  for _, k in ipairs({ 'path', 'pattern', 'url', 'description', 'expression' }) do
    if type(args[k]) == 'string' and args[k] ~= '' then
      local extra = (k == 'pattern' and type(args.path) == 'string') and (' in ' .. args.path) or ''
      return ('%s %s%s'):format(name, first_line(args[k]), extra)
    end
  end
  return name
end

--- Show a resumed session's conversation in the transcript: its active branch in full — your messages, the
--- answers, each tool call with what it was about (path, command, pattern) and its status — and a mark where the
--- branch leaves an entry that has other branches (agent/fork, :Kgent fork).
---@param s table  the agent/session result (all entries, or the branch only)
function M.render_session(s)
  local icon = transcript.ICON
  transcript.use(s.sessionId)
  local entries = s.entries or {}
  local on_branch, children = {}, {}
  for _, id in ipairs(s.branch or {}) do
    on_branch[id] = true
  end
  for _, e in ipairs(entries) do
    if e.parentId then
      children[e.parentId] = (children[e.parentId] or 0) + 1
    end
  end
  local branch_entries = {}
  for _, e in ipairs(entries) do
    if next(on_branch) == nil or on_branch[e.id] then
      branch_entries[#branch_entries + 1] = e
    end
  end
  local lines = {}
  lines[#lines + 1] = ('## Resumed session %s · %s'):format(s.sessionId or '?', first_line(s.title or ''))
  -- As many entries as :Kgent sessions says (agent/sessions' entryCount counts every branch's).
  local count = ('%d entries'):format(#entries)
  if #branch_entries < #entries then
    count = count .. (', %d on this branch'):format(#branch_entries)
  end
  lines[#lines + 1] = ('_%s · %s_'):format(s.workspace or '', count)
  for _, w in ipairs(s.warnings or {}) do
    lines[#lines + 1] = '_warning: ' .. tostring(w) .. '_'
  end
  local calls = {} -- toolCallId -> {name, arguments} of the assistant messages so far
  local decisions = {} -- toolCallId -> its permission entry, until its result
  for _, e in ipairs(branch_entries) do
    local n = e.parentId and children[e.parentId] or 0
    if n > 1 then
      lines[#lines + 1] = ''
      lines[#lines + 1] =
        require('kgent.choose').branch_line(('branch (%d branches leave here; :Kgent fork)'):format(n))
    end
    local m = e.type == 'message' and e.message or nil
    if m and m.role == 'user' then
      lines[#lines + 1] = ''
      local text = vim.split(m.text or '', '\n', { plain = true })
      lines[#lines + 1] = '**You:** ' .. (text[1] or '')
      vim.list_extend(lines, text, 2)
      vim.list_extend(lines, M.image_lines(m.images))
    elseif m and m.role == 'assistant' then
      for _, c in ipairs(m.toolCalls or {}) do
        calls[c.id] = c
      end
      if m.text and m.text ~= '' then
        lines[#lines + 1] = ''
        vim.list_extend(lines, vim.split(m.text, '\n', { plain = true }))
      end
    elseif m and m.role == 'tool' then
      local c = calls[m.toolCallId] or {}
      local title = M.call_title(m.name or c.name or 'tool', c.arguments)
      -- Its outcome, not only "failed": a refused call is rejected, one a cancel cut short cancelled (their results
      -- say so: "permission_denied: …", "cancelled: …"), with the decision's words when one was asked for.
      local d = decisions[m.toolCallId]
      decisions[m.toolCallId] = nil
      local content = type(m.content) == 'string' and m.content or ''
      local status = m.isError and 'failed' or 'completed'
      if m.isError and vim.startswith(content, 'cancelled:') then
        status = 'cancelled'
      elseif m.isError and (vim.startswith(content, 'permission_denied:') or (d and d.approved == false)) then
        status = 'rejected'
      end
      local line = ('- %s %s · %s'):format(icon[status] or icon.failed, title, status)
      if d and type(d.label) == 'string' and d.label ~= '' and d.label ~= status then
        line = line .. ' · ' .. d.label
      end
      lines[#lines + 1] = line
    elseif m and m.role == 'summary' then
      lines[#lines + 1] = '_summary: ' .. first_line(m.text) .. '_'
    elseif e.type == 'compaction' then
      lines[#lines + 1] = '_compacted: the model sees a summary of what came before_'
    elseif e.type == 'permission' and e.toolCallId then
      decisions[e.toolCallId] = e -- stored before the call's result
    end
  end
  transcript.append_lines(lines, 'history')
end

return M
