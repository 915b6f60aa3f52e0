-- Approvals through vim.ui.select (setup{ approval = "select" }): one prompt at a time, so telescope, snacks,
-- dressing or fzf-lua take over when installed; a first item that only previews ("Show diff" for edits, "Show
-- details" otherwise: <CR> on the item a picker preselects never approves anything); closing the picker rejects.
--
-- Pickers come in two kinds. Asynchronous ones (telescope, snacks, fzf-lua, dressing) return from vim.ui.select at
-- once and call back later: a withdrawal closes the windows they opened. The built-in one blocks inside
-- vim.ui.select (inputlist()) while the event loop keeps running: a withdrawal ends it with <Esc>, and the next
-- prompt waits until it has returned (never a picker nested in a dead one).
local preview = require('kgent.preview')

local M = {}

local A -- kgent.approval (its pending/queue/active/blocking state and finish)
local show_deferred = false
local show_next

local select

function M.close_picker(prompt)
  local cur = vim.api.nvim_get_current_win()
  local closed_current = false
  for _, win in ipairs(prompt.wins or {}) do
    if vim.api.nvim_win_is_valid(win) then
      if win == cur then
        closed_current = true
      end
      pcall(vim.api.nvim_win_close, win, true)
    end
  end
  prompt.wins = {}
  if closed_current and vim.fn.mode():sub(1, 1) == 'i' then
    vim.cmd('stopinsert')
  end
end

select = function(prompt)
  local before = {}
  for _, w in ipairs(vim.api.nvim_list_wins()) do
    before[w] = true
  end
  local items = A.items(prompt.params)
  local answered = false
  -- Show what is on screen now (the transcript, a diff tab just opened) before a blocking picker takes over.
  pcall(vim.cmd.redraw)
  local outer = A.blocking
  A.blocking = prompt
  local ok, err = pcall(vim.ui.select, items, {
    prompt = A.prompt_text(prompt.params),
    kind = 'kgent.permission',
    format_item = function(item)
      return item.label
    end,
  }, function(item)
    if answered then
      return
    end
    answered = true
    -- Pickers call back from their own contexts; decide on the main loop.
    vim.schedule(function()
      if prompt.done then
        return -- withdrawn meanwhile: any late answer is ignored
      end
      prompt.wins = {}
      if item == nil then
        A.finish(prompt, { outcome = 'cancelled' }, 'dismissed')
      elseif item.action == 'diff' or item.action == 'details' then
        if item.action == 'diff' then
          preview.open_diff(prompt)
        else
          preview.open_details(prompt)
        end
        select(prompt) -- ask again, with the preview on screen
      else
        A.finish(prompt, { outcome = 'selected', optionId = item.option.optionId }, 'answered')
      end
    end)
  end)
  A.blocking = outer
  if show_deferred and A.blocking == nil then
    show_deferred = false
    vim.schedule(show_next)
  end
  if not ok then
    vim.notify('kgent: vim.ui.select failed: ' .. tostring(err), vim.log.levels.ERROR)
    A.finish(prompt, { outcome = 'cancelled' }, 'dismissed')
    return
  end
  -- Windows a (floating) picker opened: closed if the daemon withdraws the prompt.
  if not answered then
    local wins = {}
    for _, w in ipairs(vim.api.nvim_list_wins()) do
      if not before[w] then
        wins[#wins + 1] = w
      end
    end
    prompt.wins = wins
  end
end

function M.show_next()
  if A.active and not A.active.done then
    return
  end
  if A.blocking then
    -- A blocking picker is still on the stack (withdrawn, ending with <Esc>): ask once it has returned.
    show_deferred = true
    return
  end
  A.active = nil
  local prompt = table.remove(A.queue, 1)
  if not prompt then
    return
  end
  A.active = prompt
  prompt.shown = true
  select(prompt)
end

show_next = M.show_next

--- Queue `prompt` for the picker (shown when the ones before it are answered).
---@param approval table  kgent.approval
function M.enqueue(approval, prompt)
  A = approval
  table.insert(A.queue, prompt)
  if not A.active then
    show_next()
  end
end

--- A prompt withdrawn: close its picker (a blocking one ends as <Esc> would).
function M.withdraw(approval, prompt)
  A = approval
  M.close_picker(prompt)
  if A.blocking == prompt and not prompt.done then
    vim.api.nvim_input('<Esc>')
  end
end

return M
