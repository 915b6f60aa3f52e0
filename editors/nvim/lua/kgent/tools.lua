-- The tool lines of a transcript (kgent.transcript): one line per tool call, kept by an extmark and rewritten as its
-- status and approval change, with the first lines of its output under it — and while it runs, the last lines of
-- its output so far, rewritten in place (at most every LIVE_MS) until the result replaces them. Output is a block of
-- code (kgent.md): shown as it is, not read as markdown.
local config = require('kgent.config')
local transcript = require('kgent.transcript')
local md = require('kgent.md')

local M = {}

local I = transcript._internals()
local ns_tools = I.ns_tools

local function tool_line(t)
  local s = ('- %s %s'):format(transcript.ICON[t.status] or '·', t.title)
  s = s .. ' · ' .. t.status:gsub('_', ' ')
  if t.approval then
    s = s .. ' · ' .. t.approval
  end
  return s
end

--- Append the line of a new tool call, known as `key` from then on.
---@param key string
---@param t {title: string, status: string, run: string}
function M.add_tool(key, t)
  local row = transcript.append_lines({ tool_line(t) }, 'tool')
  t.mark = vim.api.nvim_buf_set_extmark(transcript.buf(), ns_tools, row, 0, {})
  I.current().tools[key] = t
end

--- The transcript row of tool `t`'s line (nil once it is gone).
local function row_of(t)
  local pos = vim.api.nvim_buf_get_extmark_by_id(transcript.buf(), ns_tools, t.mark, {})
  return pos and pos[1]
end

--- The tool line known as `key` (change its fields, then `update_tool(key)`).
---@return kgent.ToolLine?
function M.tool(key)
  return I.current().tools[key]
end

--- All tool lines by key.
---@return table<string, kgent.ToolLine>
function M.tools()
  return I.current().tools
end

--- Rewrite the line of tool `key` from its fields.
function M.update_tool(key)
  local t = I.current().tools[key]
  if not t then
    return
  end
  local row = row_of(t)
  if not row then
    return
  end
  I.edit(function(b)
    vim.api.nvim_buf_set_lines(b, row, row + 1, false, { tool_line(t) })
    vim.api.nvim_buf_set_extmark(b, ns_tools, row, 0, { id = t.mark })
  end)
end

local LIVE_MS = 200

-- Replace the live lines under tool `t`'s line (0 of them at first) by `lines`.
local function set_live(t, lines)
  local row = row_of(t)
  if not row then
    return
  end
  I.edit(function(b)
    vim.api.nvim_buf_set_lines(b, row + 1, row + 1 + (t.live or 0), false, lines)
  end)
  t.live = #lines
end

-- Draw the newest snapshot of tool `key` of transcript `tr`: its last `tool_output_lines` lines.
local function draw_live(tr, key)
  local t = tr.tools[key]
  if not (t and t.status == 'in_progress' and t.live_text and tr.buf and vim.api.nvim_buf_is_valid(tr.buf)) then
    return
  end
  t.live_at = vim.uv.now()
  local n = config.options.transcript.tool_output_lines
  local lines = vim.split(t.live_text, '\n', { plain = true })
  while #lines > 0 and lines[#lines] == '' do
    table.remove(lines)
  end
  local out = {}
  if #lines > n then
    out[1] = '…'
  end
  for i = math.max(1, #lines - n + 1), #lines do
    -- a progress bar redraws its line with \r: show what it shows now
    out[#out + 1] = (lines[i]:gsub('\r$', ''):match('[^\r]*$'))
  end
  local prev = I.current()
  I.set_current(tr)
  set_live(t, md.code_block(out, 2))
  I.set_current(prev)
end

--- A running call's output so far (tool_update `in_progress`: a snapshot, not a delta): its last lines under its
--- line, replacing the previous snapshot's, redrawn at most every LIVE_MS (the newest snapshot wins).
---@param key string
---@param output string
function M.live_output(key, output)
  local tr = I.current()
  local t = tr.tools[key]
  if not t or config.options.transcript.tool_output_lines <= 0 or type(output) ~= 'string' then
    return
  end
  t.live_text = output
  if t.live_due then
    return -- a redraw is due: it takes this snapshot
  end
  local wait = t.live_at and (t.live_at + LIVE_MS - vim.uv.now()) or 0
  if wait <= 0 then
    return draw_live(tr, key)
  end
  t.live_due = true
  vim.defer_fn(function()
    t.live_due = nil
    draw_live(tr, key)
  end, wait)
end

--- Insert the first `transcript.tool_output_lines` lines of a tool's output under its line (in place of the live
--- lines, if it had any).
function M.tool_output(key, output)
  local t = I.current().tools[key]
  local n = config.options.transcript.tool_output_lines
  if not t or n <= 0 or output == nil or output == '' then
    return
  end
  if t.live then
    set_live(t, {})
  end
  local lines = vim.split(output, '\n', { plain = true })
  while #lines > 0 and lines[#lines] == '' do
    table.remove(lines)
  end
  local out = vim.list_slice(lines, 1, n)
  if #lines > n then
    out[#out + 1] = ('… (%d more lines)'):format(#lines - n)
  end
  local row = row_of(t)
  if not row then
    return
  end
  I.edit(function(b)
    vim.api.nvim_buf_set_lines(b, row + 1, row + 1, false, md.code_block(out, 2))
  end)
end

return M
