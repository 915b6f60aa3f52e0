-- Markdown for the plugin's markdown buffers (the transcript, :Kgent rules): a rule or a command shown as a code
-- span, so that Neovim's markdown conceal (the transcript's conceallevel=2) leaves every character of it on screen —
-- unquoted, the `*` of `bash(grep *)` opens an italic whose delimiter is concealed.
local M = {}

--- `s` as one inline code span. A backtick inside cannot be escaped in a code span (CommonMark): the fence is one
--- backtick longer than the longest run of them in `s`, and padded with a space each side (which a renderer drops).
---@param s string
---@return string
function M.code(s)
  s = tostring(s)
  local longest = 0
  for run in s:gmatch('`+') do
    longest = math.max(longest, #run)
  end
  local fence = ('`'):rep(longest + 1)
  local pad = longest > 0 and ' ' or ''
  return fence .. pad .. s .. pad .. fence
end

return M
