-- Images in the chat (issue 26): `#image:path` in the chat buffer sends the file as an `image` block, in real headless
-- Neovim against the real daemon (loaded by test_kgent.lua); a file that is not an image is refused before sending.
return function(H)
  local test, eq, truthy = H.test, H.eq, H.truthy
  local PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC'

  test('chat: #image:path sends the image with the message; it is stored once beside the session', function()
    local ws = H.fresh({ files = { ['notes.txt'] = 'not a picture\n' }, setup = { model = 'hello', prewarm = false } })
    local bytes = vim.base64.decode(PNG)
    local f = assert(io.open(ws .. '/shot.png', 'wb'))
    f:write(bytes)
    f:close()
    local chat = require('kgent.chat')
    local cwd = vim.fn.getcwd()
    vim.cmd.cd(ws)
    vim.cmd('Kgent chat')
    local blocks, err = chat.blocks('What is this? #image:shot.png')
    eq(nil, err, 'no error')
    eq(
      { 'text', 'image' },
      vim.tbl_map(function(b)
        return b.type
      end, blocks),
      'text, then the image'
    )
    eq('image/png', blocks[2].mimeType, 'its type')
    eq(PNG, blocks[2].data, 'its bytes, base64')
    local _, bad = chat.blocks('And #image:notes.txt')
    truthy(bad and bad:find('not a PNG, JPEG, WebP or GIF', 1, true), 'a text file is refused: ' .. tostring(bad))
    local _, missing = chat.blocks('And #image:gone.png')
    truthy(missing and missing:find('cannot read', 1, true), 'a missing file is refused: ' .. tostring(missing))
    local items = vim.tbl_map(function(i)
      return i.word
    end, chat.omnifunc(0, '#image:sh'))
    eq({ '#image:shot.png' }, items, '#image: completes file names')
    vim.api.nvim_buf_set_lines(chat.state.buf, 0, -1, false, { 'What is this? #image:shot.png' })
    chat.send()
    vim.cmd.cd(cwd)
    eq('settled', H.wait_run_end().status, 'status')
    local user = H.of_type('user_message')[1]
    eq(1, #user.images, 'the image went with the message')
    eq('shot.png', user.images[1].name, 'named after the file')
    eq(#bytes, user.images[1].size, 'its size')
    local blobs = vim.fn.glob(H.state_dir .. '/**/*.blobs/*', false, true)
    eq(1, #blobs, 'one blob')
    eq(user.images[1].sha256, vim.fs.basename(blobs[1]), 'named by its hash')
  end)
end
