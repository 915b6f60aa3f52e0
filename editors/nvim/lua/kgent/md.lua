-- Markdown for the plugin's markdown buffers (the transcript, :Kgent rules): text that must be shown as it is — a
-- rule or a command (a code span), a command's output or a diff (a block of code) — written so that Neovim's markdown
-- (Vim's syntax or the parser, with the transcript's conceallevel=2) reads no markup in it: unquoted, the `*` of
-- `bash(grep *)` opens an italic whose delimiter is concealed, `test_05` gets an error mark, `# x` is a heading.
local M = {}

-- The longest run of backticks in `s` (0: none).
local function longest_run(s)
  local longest = 0
  for run in s:gmatch('`+') do
    longest = math.max(longest, #run)
  end
  return longest
end

--- `s` as one inline code span. A backtick inside cannot be escaped in a code span (CommonMark): the fence is one
--- backtick longer than the longest run of them in `s`, and padded with a space each side (which a renderer drops).
---@param s string
---@return string
function M.code(s)
  s = tostring(s)
  local longest = longest_run(s)
  local fence = ('`'):rep(longest + 1)
  local pad = longest > 0 and ' ' or ''
  return fence .. pad .. s .. pad .. fence
end

--- `lines` as an indented code block: a blank line (such a block cannot interrupt a paragraph, and Vim's markdown
--- syntax starts one only after a blank line), then each line indented 4 columns past `base`, the column where the
--- content of the block they belong to starts (2 under a list item such as a tool line, 0 at the top). It ends at
--- the first line indented less, never at one of its own, and unlike a fence it reads the same wherever Vim's
--- syntax starts parsing (some lines up, not from the top: it could take a closing fence for an opening one).
--- No lines: none.
---@param lines string[]
---@param base integer?
---@return string[]
function M.code_block(lines, base)
  if #lines == 0 then
    return {}
  end
  local pad = (' '):rep((base or 0) + 4)
  local out = { '' }
  for _, l in ipairs(lines) do
    out[#out + 1] = pad .. l
  end
  return out
end

--- `lines` as a fenced code block of `lang` (e.g. "diff", which a renderer may colour), its fence longer than any
--- run of backticks in them, so that none of them closes it (a diff of a markdown file holds " ```").
---@param lines string[]
---@param lang string?
---@return string[]
function M.fenced(lines, lang)
  local longest = 0
  for _, l in ipairs(lines) do
    longest = math.max(longest, longest_run(l))
  end
  local fence = ('`'):rep(math.max(3, longest + 1))
  local out = { fence .. (lang or '') }
  vim.list_extend(out, lines)
  out[#out + 1] = fence
  return out
end

return M
