-- Highlight groups of the transcript, the approvals and the chat, each linked (`default = true`, so a colour scheme
-- or the user may override them) to a standard group. See :help kgent-highlights.
local M = {}

M.groups = {
  KgentHeader = 'Title', -- "## Run …" headers
  KgentUser = 'Identifier', -- your prompt, steering and follow-up messages
  KgentTool = 'Function', -- tool call lines
  KgentNote = 'Comment', -- notes (queued messages, retries, the daemon's state)
  KgentSummary = 'Special', -- "Run settled" and the changed files
  KgentApproval = 'DiagnosticWarn', -- a pending approval
  KgentApprovalKey = 'Special', -- the keys line of a pending approval
  KgentLost = 'DiagnosticError', -- tools lost with a daemon that died
  KgentQueue = 'DiagnosticHint', -- the chat's queued messages
  KgentPlan = 'DiagnosticInfo', -- the agent's plan (todo_write)
}

--- Which group each kind of transcript line gets.
M.kind = {
  header = 'KgentHeader',
  user = 'KgentUser',
  tool = 'KgentTool',
  note = 'KgentNote',
  summary = 'KgentSummary',
  approval = 'KgentApproval',
  lost = 'KgentLost',
  plan = 'KgentPlan',
  branch = 'KgentNote',
}

function M.setup()
  for name, link in pairs(M.groups) do
    vim.api.nvim_set_hl(0, name, { link = link, default = true })
  end
end

--- Highlight `n` lines from the 0-based `row` of `buf` as `kind` (nothing for kinds without a group).
function M.mark(buf, ns, row, n, kind)
  local group = M.kind[kind]
  if not group or n <= 0 then
    return
  end
  for r = row, row + n - 1 do
    pcall(vim.api.nvim_buf_set_extmark, buf, ns, r, 0, { line_hl_group = group, priority = 50, invalidate = true })
  end
end

M.setup()
vim.api.nvim_create_autocmd('ColorScheme', {
  group = vim.api.nvim_create_augroup('kgent.highlights', { clear = true }),
  callback = M.setup,
})

return M
