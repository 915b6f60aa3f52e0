-- Approvals inside the transcript (setup{ approval = "inline" }, the default): the pending call is written into its
-- session's transcript — what it does, why the daemon asks, the command or path, the proposed diff (its first
-- `approval_diff_lines` lines) and the keys — and answered with buffer-local keys while everything else (reading,
-- scrolling, :Kgent cancel, other windows) goes on. Several calls may be pending at once: a key answers the call
-- under the cursor, else the oldest of that transcript. When an approval timeout is set, a countdown line says when
-- the daemon will reject it.
local config = require('kgent.config')
local transcript = require('kgent.transcript')
local preview = require('kgent.preview')
local md = require('kgent.md')

local M = {}

local ns_keys = vim.api.nvim_create_namespace('kgent.approval.keys')

local LABEL = {
  allow_once = 'allow once',
  allow_always = 'allow for the session',
  allow_always_project = 'allow always in this project',
  reject_once = 'reject',
  reject_always = 'reject always',
  reject_always_project = 'reject always in this project',
  options = 'pick any of its answers',
}

local function keys()
  return config.options.approval_keys
end

--- The key of each option of `prompt` (by optionId: approval_keys[optionId], else approval_keys[kind] for the first
--- option of that kind); options without a key are still listed and reached through the `options` key.
---@return table<string, string|false>  optionId → key
local function option_keys(prompt)
  local k = keys()
  local out, taken = {}, {}
  for _, o in ipairs(prompt.params.options or {}) do
    if k[o.optionId] then
      out[o.optionId] = k[o.optionId]
      taken[k[o.optionId]] = true
    end
  end
  for _, o in ipairs(prompt.params.options or {}) do
    local key = k[o.kind]
    if out[o.optionId] == nil and key and not taken[key] then
      out[o.optionId] = key
      taken[key] = true
    end
  end
  return out
end
M.option_keys = option_keys

--- The lines that list the answers of `prompt`, each with its key and, for an "always" answer, the rule(s) it
--- creates in words; then a line with the preview keys (the highlighted keys line).
---@return string[] options, string keys
local function option_lines(prompt)
  local A = require('kgent.approval')
  local k = keys()
  local ok = option_keys(prompt)
  local lines = {}
  for _, o in ipairs(prompt.params.options or {}) do
    if type(o) == 'table' and o.optionId then
      lines[#lines + 1] = ('  [%s] %s'):format(ok[o.optionId] or '-', o.name or LABEL[o.optionId] or o.optionId)
      if type(o.rules) == 'table' then
        for _, r in ipairs(o.rules) do
          lines[#lines + 1] = ('        rule %s: %s'):format(md.code(r.rule or '?'), r.text or '')
        end
      end
    end
  end
  if prompt.params.noRule then
    lines[#lines + 1] = '  no "always" rule: ' .. prompt.params.noRule
  end
  local parts = {}
  if k.preview then
    parts[#parts + 1] = ('[%s] %s'):format(k.preview, preview.has_diff(prompt.params) and 'diff' or 'details')
  end
  if k.options then
    parts[#parts + 1] = ('[%s] all answers'):format(k.options)
  end
  if k.accept_edited and A.can_answer_text(prompt) then
    parts[#parts + 1] = ('(in the diff: edit the proposal, :w or %s accepts your version)'):format(k.accept_edited)
  end
  return lines, '  ' .. table.concat(parts, '  ')
end

local function countdown_line(left)
  return ('  _rejected in %d s if unanswered_'):format(math.max(0, math.ceil(left)))
end

--- The lines of the block for `prompt`.
---@return string[]
function M.block_lines(prompt)
  local p = prompt.params
  local tc = p.toolCall or {}
  local tags = {}
  for _, k in ipairs({ 'risk', 'operation', 'scope' }) do
    if p[k] then
      tags[#tags + 1] = p[k]
    end
  end
  local who = p.agent and ('(sub-agent "%s") '):format(p.agent) or ''
  local lines = {
    ('**Approve?** %s%s%s'):format(
      who,
      tc.title or tc.name or 'tool call',
      #tags > 0 and ('  [' .. table.concat(tags, ' · ') .. ']') or ''
    ),
  }
  if p.reason then
    lines[#lines + 1] = '  why: ' .. p.reason
  end
  if tc.command then
    for i, l in ipairs(preview.split_text(tc.command)) do
      lines[#lines + 1] = (i == 1 and '  $ ' or '    ') .. md.code(l) -- as typed: no `*` taken for markdown
    end
  elseif tc.path and not (tc.title or ''):find(tc.path, 1, true) then
    lines[#lines + 1] = '  path: ' .. tc.path
  end
  if type(tc.args) == 'table' and tc.args.url then
    lines[#lines + 1] = '  url: ' .. tostring(tc.args.url)
  end
  local n = config.options.approval_diff_lines
  if tc.diff and tc.diff ~= '' and n > 0 then
    local d = preview.split_text(tc.diff)
    vim.list_extend(lines, md.code_block(vim.list_slice(d, 1, n))) -- as it is: no `*` or `_` taken for markdown
    if #d > n then
      lines[#lines + 1] = ('  … %d more lines: [%s] opens the whole diff'):format(#d - n, keys().preview or 'd')
    end
  elseif tc.kind == 'edit' and not preview.has_diff(p) then
    lines[#lines + 1] = '  (no diff: the daemon sent no proposed content)'
  end
  local opts, keys_line = option_lines(prompt)
  vim.list_extend(lines, opts)
  lines[#lines + 1] = keys_line
  return lines
end

--- The approval timeout in seconds for prompts of `conn`, or nil.
local function timeout_of(conn)
  if config.options.approval_timeout then
    return config.options.approval_timeout
  end
  local r = conn and conn.init_result
  local f = r and r.capabilities and r.capabilities.features
  return f and type(f.approvalTimeout) == 'number' and f.approvalTimeout or nil
end

--- Prompts waiting for their tool line (by tool key): the agent/permission request may be handled before the
--- events that precede it on the wire (observed in Neovim 0.11: vim.lsp.rpc schedules requests and our
--- notifications separately), and the block belongs under the call's line.
---@type table<string, kgent.Prompt>
M.waiting = {}

local function tool_key(p)
  return tostring(p.runId or '') .. '\0' .. tostring((p.toolCall or {}).toolCallId or '')
end

--- Show `prompt` in its session's transcript once its tool line is there (at the latest after 1 s).
---@param A table  kgent.approval
---@param prompt kgent.Prompt
function M.show(prompt)
  local tk = tool_key(prompt.params)
  local prev = transcript.current()
  transcript.use(prompt.params.sessionId)
  local has_line = transcript.tool(tk) ~= nil
  transcript.use(prev)
  if has_line then
    return M.render(prompt)
  end
  M.waiting[tk] = prompt
  vim.defer_fn(function()
    if M.waiting[tk] == prompt then
      M.waiting[tk] = nil
      if not prompt.done then
        M.render(prompt)
      end
    end
  end, 1000)
end

--- The tool line `tk` was written (kgent.render): show the prompt that waited for it.
function M.tool_added(tk)
  local prompt = M.waiting[tk]
  if prompt then
    M.waiting[tk] = nil
    if not prompt.done then
      M.render(prompt)
    end
  end
end

--- Write the block of `prompt` into its session's transcript (opening that transcript's window if none shows it).
function M.render(prompt)
  local key = prompt.params.sessionId
  local prev = transcript.current()
  transcript.use(key)
  local lines = M.block_lines(prompt)
  local timeout = timeout_of(prompt.owner)
  if timeout then
    lines[#lines + 1] = countdown_line(timeout)
  end
  local block = transcript.add_block(lines, 'approval')
  local keys_mark
  local first, _, buf = transcript.block_rows(block)
  if first then
    -- The keys line stands out from the rest of the block.
    local keys_row = first + #lines - (timeout and 2 or 1)
    local ok, id = pcall(
      vim.api.nvim_buf_set_extmark,
      buf,
      ns_keys,
      keys_row,
      0,
      { line_hl_group = 'KgentApprovalKey', priority = 60, invalidate = true }
    )
    keys_mark = ok and { buf = buf, id = id } or nil
  end
  transcript.use(prev)
  prompt.inline = { block = block, key = key, keys_mark = keys_mark }
  prompt.shown = true
  if timeout then
    local deadline = vim.uv.now() + timeout * 1000
    local timer = vim.uv.new_timer()
    prompt.inline.timer = timer
    timer:start(
      1000,
      1000,
      vim.schedule_wrap(function()
        if prompt.done or timer:is_closing() then
          return
        end
        transcript.set_block_line(block, #lines - 1, countdown_line((deadline - vim.uv.now()) / 1000))
      end)
    )
  end
  local ok, ui = pcall(require, 'kgent.ui')
  if ok then
    ui.show(key)
  end
  local tc = prompt.params.toolCall or {}
  -- sub-agents side by side may ask together: each notification says whose call it is
  local who = prompt.params.agent and ('sub-agent "%s": '):format(prompt.params.agent) or ''
  vim.notify(
    ('kgent: approval needed: %s%s (%s allows, %s rejects in the transcript)'):format(
      who,
      tc.title or tc.name or 'tool call',
      keys().allow_once or '?',
      keys().reject_once or '?'
    ),
    vim.log.levels.INFO
  )
  vim.cmd.redrawstatus({ bang = true })
end

--- Remove the block of `prompt` (answered, dismissed or withdrawn).
function M.close(prompt)
  local s = prompt.inline
  if not s then
    return
  end
  prompt.inline = nil
  if s.timer and not s.timer:is_closing() then
    s.timer:stop()
    s.timer:close()
  end
  if s.keys_mark and vim.api.nvim_buf_is_valid(s.keys_mark.buf) then
    pcall(vim.api.nvim_buf_del_extmark, s.keys_mark.buf, ns_keys, s.keys_mark.id)
  end
  transcript.remove_block(s.block)
  pcall(vim.cmd.redrawstatus, { bang = true })
end

--- The prompt the keys of `buf` act on: the one whose block holds the cursor, else the oldest of the transcript.
---@param buf integer
---@return kgent.Prompt?
function M.target(buf)
  local A = require('kgent.approval')
  local key = vim.b[buf].kgent_transcript
  -- Only inline prompts: one asked through a picker is answered there (its windows would stay open otherwise).
  local list = vim.tbl_filter(function(p)
    return p.how == 'inline'
  end, A.list(key))
  local win = vim.fn.bufwinid(buf)
  if win ~= -1 and vim.api.nvim_win_get_buf(vim.api.nvim_get_current_win()) == buf then
    local row = vim.api.nvim_win_get_cursor(0)[1] - 1
    for _, p in ipairs(list) do
      local first, last = transcript.block_rows(p.inline and p.inline.block or {})
      if first and row >= first and row <= last then
        return p
      end
    end
  end
  return list[1]
end

--- Act on the target prompt of `buf`: an option kind, or "preview".
function M.act(buf, what)
  local A = require('kgent.approval')
  local p = M.target(buf)
  if not p then
    vim.notify('kgent: no approval is waiting in this transcript', vim.log.levels.INFO)
    return
  end
  if what == 'preview' then
    return A.preview(p)
  end
  if what == 'options' then
    local items = vim.tbl_filter(function(it)
      return it.action == 'select'
    end, A.items(p.params))
    return vim.ui.select(items, {
      prompt = A.prompt_text(p.params),
      kind = 'kgent.permission',
      format_item = function(item)
        return item.label
      end,
    }, function(item)
      if item then
        vim.schedule(function()
          A.answer(p, item.option.optionId)
        end)
      end
    end)
  end
  local by_key = option_keys(p)
  for id, key in pairs(by_key) do
    if key == keys()[what] then
      what = id -- the option this key stands for on this prompt
      break
    end
  end
  if not A.answer(p, what) then
    vim.notify(('kgent: this call offers no "%s"'):format(LABEL[what] or what), vim.log.levels.WARN)
  end
end

--- Give a transcript buffer the approval keys.
---@param buf integer
function M.attach(buf)
  for what, lhs in pairs(keys()) do
    if lhs and what ~= 'accept_edited' then
      vim.keymap.set('n', lhs, function()
        M.act(buf, what)
      end, {
        buffer = buf,
        nowait = true,
        desc = 'Kgent approval: ' .. (LABEL[what] or 'show the diff or details'),
      })
    end
  end
end

transcript.on_buffer = M.attach

return M
