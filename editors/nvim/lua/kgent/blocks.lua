-- Blocks of a transcript (kgent.transcript) that can be rewritten or removed later — a pending approval with its
-- countdown — kept by two extmarks (its first and last line).
local transcript = require('kgent.transcript')

local M = {}

local ns_blocks = vim.api.nvim_create_namespace('kgent.transcript.blocks')
local I = transcript._internals()

local function mark(row, n)
  local buf = transcript.buf()
  local first = vim.api.nvim_buf_set_extmark(buf, ns_blocks, row, 0, {})
  local last = vim.api.nvim_buf_set_extmark(buf, ns_blocks, row + n - 1, 0, { right_gravity = false })
  return { key = I.current().key, first = first, last = last }
end

--- Append `lines` as a block that can be rewritten or removed later; returns its handle.
---@param lines string[]
---@param kind string
---@return {key: string, first: integer, last: integer}
function M.add(lines, kind)
  -- append_lines may put a blank line before them (into the table it is given): count the block's own lines.
  local n = #lines
  local row = transcript.append_lines(vim.list_extend({}, lines), kind)
  return mark(row, n)
end

--- Append `lines` (left unchanged) as a block spanning exactly them, for M.replace; returns its handle.
function M.add_exact(lines, kind)
  return mark(transcript.append_lines(vim.list_extend({}, lines), kind), #lines)
end

--- The 0-based rows [first, last] of a block, or nil if it is gone.
function M.rows(b)
  local t = I.get(b.key)
  if not t or not t.buf or not vim.api.nvim_buf_is_valid(t.buf) then
    return nil
  end
  local p1 = vim.api.nvim_buf_get_extmark_by_id(t.buf, ns_blocks, b.first, {})
  local p2 = vim.api.nvim_buf_get_extmark_by_id(t.buf, ns_blocks, b.last, {})
  if not p1[1] or not p2[1] then
    return nil
  end
  return p1[1], p2[1], t.buf
end

--- Rewrite one line (0-based offset in the block) of a block.
function M.set_line(b, offset, text)
  local first, last, buf = M.rows(b)
  if not first or first + offset > last then
    return
  end
  local prev = I.current()
  I.set_current(I.get(b.key))
  I.edit(function(bb)
    vim.api.nvim_buf_set_lines(bb, first + offset, first + offset + 1, false, { text })
  end)
  I.set_current(prev)
  I.hl(buf, first + offset, 1, 'approval')
end

--- Replace a block's lines by `lines` (any number), in place; false if the block is gone.
function M.replace(b, lines, kind)
  local first, last, buf = M.rows(b)
  if not first then
    return false
  end
  local prev = I.current()
  I.set_current(I.get(b.key))
  I.edit(function(bb)
    vim.api.nvim_buf_del_extmark(bb, ns_blocks, b.first)
    vim.api.nvim_buf_del_extmark(bb, ns_blocks, b.last)
    vim.api.nvim_buf_set_lines(bb, first, last + 1, false, lines)
    b.first = vim.api.nvim_buf_set_extmark(bb, ns_blocks, first, 0, {})
    b.last = vim.api.nvim_buf_set_extmark(bb, ns_blocks, first + #lines - 1, 0, { right_gravity = false })
  end)
  I.set_current(prev)
  I.hl(buf, first, #lines, kind)
  return true
end

--- Remove a block (and the blank line before it, if it is the buffer's last thing).
function M.remove(b)
  local first, last = M.rows(b)
  if not first then
    return
  end
  local prev = I.current()
  I.set_current(I.get(b.key))
  I.edit(function(bb)
    local at_end = last == vim.api.nvim_buf_line_count(bb) - 1
    local from = first
    if at_end and from > 0 and vim.api.nvim_buf_get_lines(bb, from - 1, from, false)[1] == '' then
      from = from - 1
    end
    vim.api.nvim_buf_set_lines(bb, from, last + 1, false, {})
    vim.api.nvim_buf_del_extmark(bb, ns_blocks, b.first)
    vim.api.nvim_buf_del_extmark(bb, ns_blocks, b.last)
    if at_end and I.current().tail == 'approval' then
      I.current().tail = 'removed'
    end
  end)
  I.set_current(prev)
end

return M
