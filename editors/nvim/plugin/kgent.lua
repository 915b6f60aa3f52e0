-- Registers :Kgent at startup; the plugin's modules load on first use. require("kgent").setup{} configures it
-- (without it, the defaults of :help kgent-config apply).
if vim.g.loaded_kgent then
  return
end
vim.g.loaded_kgent = true

if vim.fn.has('nvim-0.10') ~= 1 then
  vim.api.nvim_err_writeln('kgent.nvim needs Neovim 0.10 or later')
  return
end

require('kgent.commands').register()
