-- ctxls for Neovim 0.11+ (built-in LSP client; no plugins needed).
--
-- Put this file in your config (e.g. ~/.config/nvim/plugin/ctxls.lua, or paste it into init.lua).
-- `ctxls` must be on $PATH (`pipx install ctxls`, or `pip install ctxls` in an active venv); otherwise set
-- `cmd` to an absolute path, e.g. { "/path/to/venv/bin/ctxls", "serve" }.
--
-- What you get: diagnostics on CLAUDE.md / AGENTS.md / SKILL.md / .claude/rules/*.md (all markdown),
-- hover (K) showing what an agent started in the file's directory loads, a code lens with token counts,
-- quick fixes (`gra` in 0.11+, or :lua vim.lsp.buf.code_action()), go-to-definition on @imports, and the
-- commands :CtxlsContext, :CtxlsBudget, :CtxlsRefresh below.
--
-- Hover works on ANY file of the workspace (it answers "what loads if an agent touches this file?"), but
-- Neovim only attaches a server to the filetypes listed here. :CtxlsHover (below) shows that hover for the
-- current buffer whatever its filetype, without attaching. To get K on source files too, add their filetypes
-- after this file has run, in your own config:
--     vim.lsp.config("ctxls", { filetypes = { "markdown", "python", "typescript", "go" } })
-- (vim.lsp.config merges tables, so only the keys you pass change; lists are replaced, not appended.)
-- Note: the server currently re-checks the whole workspace (debounced) after every edit of ANY open buffer,
-- source files included; on a large monorepo that is seconds of CPU per edit burst. Add source filetypes once
-- that is fixed, or if your workspace is small.

vim.lsp.config("ctxls", {
  cmd = { "ctxls", "serve" },
  filetypes = { "markdown" },
  -- The first marker found walking up from the buffer wins: a .ctxls.toml marks the workspace root explicitly,
  -- otherwise the git root. Without either, the server falls back to Neovim's working directory.
  root_markers = { ".ctxls.toml", ".git" },
  -- Sent on request as `workspace/configuration` (section "ctxls"); it overrides .ctxls.toml key by key.
  -- Every key of the README's configuration table is accepted; `check` holds the rule-engine options
  -- (docs/rules.md). Unknown keys or bad values give a warning and fall back to the default.
  settings = {
    ctxls = {
      window = 200000, -- context window in tokens (1000000 for the 1M option)
      -- model = "claude-sonnet-4-6",        -- picks a token calibration factor (core/tokens.py)
      -- agents_md_mode = "claude-md-or-agents-md",
      check = {
        session_budget_tokens = 10000, -- instruction tokens a directory may load at startup
        file_budget_tokens = 2000,     -- one always-loaded file above this is over budget
        -- ignore = { "CTX2" },         -- codes or prefixes to silence
      },
    },
  },
  -- Neovim pulls diagnostics (textDocument/diagnostic) only when a buffer is opened or edited, and (up to
  -- 0.12-dev at least) does not implement workspace/diagnostic/refresh. ctxls also re-checks when files change
  -- on disk (git checkout, an agent rewriting a rule, a new memory file) and then asks the client to pull again;
  -- advertise refresh support and answer it below, or those updates only show after your next edit.
  capabilities = { workspace = { diagnostics = { refreshSupport = true } } },
  handlers = {
    ["workspace/diagnostic/refresh"] = function(_, _, ctx)
      local client = vim.lsp.get_client_by_id(ctx.client_id)
      for bufnr in pairs(client and client.attached_buffers or {}) do
        -- only buffers Neovim pulls for; the default handler stores the report in its pull namespace
        if vim.api.nvim_buf_is_loaded(bufnr) and client:supports_method("textDocument/diagnostic", bufnr) then
          client:request("textDocument/diagnostic",
            { textDocument = vim.lsp.util.make_text_document_params(bufnr) }, nil, bufnr)
        end
      end
      return vim.NIL
    end,
    -- The agent asks before a write or a command (Neovim has no refactor preview): Apply / Reject, Run / Reject.
    -- vim.ui.select lets a UI plugin (telescope, dressing, snacks) draw the choice; an asynchronous one calls
    -- back later, so wait for it (vim.wait keeps the editor responsive meanwhile).
    ["window/showMessageRequest"] = function(_, params)
      local titles = vim.tbl_map(function(a)
        return a.title
      end, params.actions or {})
      if #titles == 0 then
        vim.notify(params.message, vim.log.levels.INFO)
        return vim.NIL
      end
      local chosen, answered = nil, false
      vim.ui.select(titles, { prompt = params.message }, function(item)
        chosen, answered = item, true
      end)
      vim.wait(10 * 60 * 1000, function()
        return answered
      end, 50)
      return chosen and { title = chosen } or vim.NIL
    end,
    -- The reports (:CtxlsContext, :CtxlsBudget, the "Show ..." source actions) arrive as window/showDocument.
    -- Neovim's default handler raises E348 when the cursor sits on a blank line (it calls
    -- expand("<cword>") for the tag stack), so fall back to a plain :edit of the report.
    ["window/showDocument"] = function(err, params, ctx)
      local ok, res = pcall(vim.lsp.handlers["window/showDocument"], err, params, ctx)
      if ok then
        return res
      end
      if params.external or not vim.startswith(params.uri, "file:") then
        return { success = false }
      end
      vim.cmd.edit(vim.fn.fnameescape(vim.uri_to_fname(params.uri)))
      return { success = true }
    end,
  },
})

vim.lsp.enable("ctxls")

-- Optional niceties: code lens on attach, and user commands for the server's commands.
vim.api.nvim_create_autocmd("LspAttach", {
  group = vim.api.nvim_create_augroup("ctxls_attach", { clear = true }),
  callback = function(args)
    local client = vim.lsp.get_client_by_id(args.data.client_id)
    if not client or client.name ~= "ctxls" then
      return
    end
    if client:supports_method("textDocument/codeLens") then
      vim.lsp.codelens.refresh({ bufnr = args.buf })
      vim.api.nvim_create_autocmd({ "BufEnter", "InsertLeave", "BufWritePost" }, {
        buffer = args.buf,
        group = vim.api.nvim_create_augroup("ctxls_codelens_" .. args.buf, { clear = true }),
        callback = function()
          vim.lsp.codelens.refresh({ bufnr = args.buf })
        end,
      })
    end
  end,
})

--- Runs a ctxls command through the client attached to the current buffer (any ctxls client otherwise).
local function ctxls_command(command, arguments)
  local bufnr = vim.api.nvim_get_current_buf()
  local client = vim.lsp.get_clients({ bufnr = bufnr, name = "ctxls" })[1]
    or vim.lsp.get_clients({ name = "ctxls" })[1]
  if not client then
    vim.notify("ctxls: no running ctxls client", vim.log.levels.WARN)
    return
  end
  -- Reports open through window/showDocument (a markdown file under <workspace>/.ctxls/reports/).
  client:exec_cmd({ title = command, command = command, arguments = arguments }, { bufnr = bufnr })
end

-- The hover of the current buffer, also for buffers ctxls is not attached to (source files): "what does an
-- agent started here load, and what does reading this file add?"
vim.api.nvim_create_user_command("CtxlsHover", function()
  local bufnr = vim.api.nvim_get_current_buf()
  local client = vim.lsp.get_clients({ bufnr = bufnr, name = "ctxls" })[1]
    or vim.lsp.get_clients({ name = "ctxls" })[1]
  if not client or vim.api.nvim_buf_get_name(bufnr) == "" then
    vim.notify("ctxls: no running ctxls client, or the buffer has no file", vim.log.levels.WARN)
    return
  end
  local position = { line = 0, character = 0 } -- the server reads unattached files from disk
  if client.attached_buffers[bufnr] then
    position = vim.lsp.util.make_position_params(0, client.offset_encoding).position
  end
  client:request("textDocument/hover", { textDocument = { uri = vim.uri_from_bufnr(bufnr) }, position = position },
    function(err, result)
      if err or not (result and result.contents) then
        vim.notify("ctxls: " .. (err and err.message or "nothing to show here"), vim.log.levels.INFO)
        return
      end
      local lines = vim.lsp.util.convert_input_to_markdown_lines(result.contents)
      vim.lsp.util.open_floating_preview(lines, "markdown", { border = "rounded", focus_id = "ctxls_hover" })
    end, bufnr)
end, { desc = "ctxls: what loads for an agent working on this file" })
vim.api.nvim_create_user_command("CtxlsContext", function()
  ctxls_command("ctxls.contextReport", { vim.uri_from_bufnr(0) })
end, { desc = "ctxls: what an agent started in this buffer's directory loads" })
vim.api.nvim_create_user_command("CtxlsBudget", function()
  ctxls_command("ctxls.budgetReport", {})
end, { desc = "ctxls: context budget report of the workspace" })
vim.api.nvim_create_user_command("CtxlsRefresh", function()
  ctxls_command("ctxls.refresh", {})
end, { desc = "ctxls: rescan the workspace" })

-- The agent (needs ANTHROPIC_API_KEY in the environment Neovim was started from; the server inherits it).
-- "ctxls agent: Ask about this selection…" code actions carry no prompt: this client-side handler of the command
-- asks for one with vim.ui.input, then sends workspace/executeCommand. Fix / Redesign actions bring their own.
-- Edits come back as workspace/applyEdit after you chose Apply; they change the buffer, you save.
local function agent_ask(arg, bufnr)
  local client = vim.lsp.get_clients({ bufnr = bufnr, name = "ctxls" })[1] or vim.lsp.get_clients({ name = "ctxls" })[1]
  if not client then
    vim.notify("ctxls: no running ctxls client", vim.log.levels.WARN)
    return
  end
  local function send(prompt)
    if not prompt or prompt == "" then
      return
    end
    arg.prompt = prompt
    client:request("workspace/executeCommand", { command = "ctxls.agent.ask", arguments = { arg } }, function(err, res)
      if err then
        vim.notify("ctxls agent: " .. err.message, vim.log.levels.ERROR)
      elseif res and res.status ~= "finished" then
        vim.notify("ctxls agent: " .. (res.detail or res.status), vim.log.levels.WARN)
      end
    end, bufnr)
  end
  if arg.prompt and arg.prompt ~= "" then
    send(arg.prompt)
  else
    vim.ui.input({ prompt = "ctxls agent: " }, send)
  end
end

vim.lsp.commands["ctxls.agent.ask"] = function(command, ctx)
  local arg = vim.deepcopy((command.arguments or {})[1] or {})
  arg.uri = arg.uri or vim.uri_from_bufnr(ctx.bufnr)
  agent_ask(arg, ctx.bufnr)
end

vim.api.nvim_create_user_command("CtxlsAgentAsk", function(opts)
  local arg = { uri = vim.uri_from_bufnr(0) }
  if opts.range > 0 then
    arg.range = { start = { line = opts.line1 - 1, character = 0 }, ["end"] = { line = opts.line2, character = 0 } }
  end
  agent_ask(arg, vim.api.nvim_get_current_buf())
end, { range = true, desc = "ctxls: ask the agent about this buffer or the selected lines" })

-- Suggested maps (buffer-local on attach would be kinder to your own maps; change the keys as you like):
vim.keymap.set("n", "<leader>ca", "<cmd>CtxlsAgentAsk<cr>", { desc = "ctxls agent: ask about this file" })
vim.keymap.set("x", "<leader>ca", ":CtxlsAgentAsk<cr>", { desc = "ctxls agent: ask about the selection" })
