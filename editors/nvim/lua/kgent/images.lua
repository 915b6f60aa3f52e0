-- Images in the chat: `#image:path` attaches a PNG, JPEG, WebP or GIF file to the prompt as an `image` block
-- (protocol.md, "Prompt content blocks"). Read here, base64-encoded; the daemon checks the bytes and the limits.
local M = {}

local TYPES = { png = 'image/png', jpg = 'image/jpeg', jpeg = 'image/jpeg', webp = 'image/webp', gif = 'image/gif' }
M.MAX_BYTES = 5 * 1024 * 1024

--- The `image` block for the file at `path` (relative to the current directory, as #file: is).
---@param path string
---@return table? block, string? err
function M.block(path)
  local abs = vim.fn.fnamemodify(path, ':p')
  local mime = TYPES[(abs:match('%.(%w+)$') or ''):lower()]
  if not mime then
    return nil, ('#image:%s: not a PNG, JPEG, WebP or GIF file'):format(path)
  end
  local f = io.open(abs, 'rb')
  if not f then
    return nil, ('#image:%s: cannot read %s'):format(path, abs)
  end
  local data = f:read('*a')
  f:close()
  if #data > M.MAX_BYTES then
    return nil, ('#image:%s: %d bytes, over the 5 MiB limit'):format(path, #data)
  end
  return { type = 'image', data = vim.base64.encode(data), mimeType = mime, uri = vim.uri_from_fname(abs) }
end

--- The image blocks for every `#image:path` in `text`, in order.
---@param text string
---@return table[] blocks, string? err
function M.blocks(text)
  local out = {}
  for path in text:gmatch('#image:(%S+)') do
    local b, err = M.block(path)
    if not b then
      return out, err
    end
    out[#out + 1] = b
  end
  return out
end

return M
