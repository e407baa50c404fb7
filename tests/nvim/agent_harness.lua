-- Headless Neovim: one agent action end to end (run by tests/nvim/test_neovim_agent.py).
--
-- Sources client-nvim/ctxls.lua as a user would (only `cmd` is overridden), opens CLAUDE.md, asks the server
-- for code actions on line 1, runs "ctxls agent: Ask about this selection…" the way Neovim runs a chosen
-- action (client:exec_cmd, which finds the snippet's client-side handler), answers vim.ui.input with
-- CTXLS_PROMPT and vim.ui.select with "Apply", and waits for the agent's edit to reach the buffer.
-- Environment: CTXLS_SNIPPET, CTXLS_PYTHON, CTXLS_WS, CTXLS_RESULT, CTXLS_PROMPT, CTXLS_TIMEOUT_MS; the server
-- inherits ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL (the test points them at the Messages API stand-in).

local snippet = assert(os.getenv("CTXLS_SNIPPET"))
local python = assert(os.getenv("CTXLS_PYTHON"))
local ws = assert(os.getenv("CTXLS_WS"))
local result_path = assert(os.getenv("CTXLS_RESULT"))
local prompt = assert(os.getenv("CTXLS_PROMPT"))
local timeout = tonumber(os.getenv("CTXLS_TIMEOUT_MS") or "15000")
for _, p in ipairs({ "python3", "node", "ruby", "perl" }) do
  vim.g["loaded_" .. p .. "_provider"] = 0
end

local result = { ok = false, steps = {}, inputs = {}, selects = {}, show_document = {} }
local function log(msg)
  table.insert(result.steps, msg)
  io.stderr:write("[ctxls-nvim-agent] " .. msg .. "\n")
end

local function finish(ok, err)
  result.ok, result.error = ok, err
  for _, c in ipairs(vim.lsp.get_clients()) do
    c:stop()
  end
  vim.wait(3000, function()
    return #vim.lsp.get_clients() == 0
  end, 10)
  local f = assert(io.open(result_path, "w"))
  f:write(vim.json.encode(result))
  f:close()
  os.exit(ok and 0 or 1)
end

local ok, err = xpcall(function()
  dofile(snippet)
  vim.lsp.config("ctxls", { cmd = { python, "-m", "ctxls", "serve" } })
  -- the user's answers: the prompt typed into vim.ui.input, "Apply" picked in vim.ui.select
  vim.ui.input = function(opts, on_confirm)
    table.insert(result.inputs, opts.prompt)
    on_confirm(prompt)
  end
  vim.ui.select = function(items, opts, on_choice)
    table.insert(result.selects, { prompt = opts.prompt, items = items })
    on_choice(vim.tbl_contains(items, "Apply") and "Apply" or nil)
  end
  local show = vim.lsp.config.ctxls.handlers["window/showDocument"]
  vim.lsp.config("ctxls", { handlers = { ["window/showDocument"] = function(e, params, ctx)
    table.insert(result.show_document, params.uri)
    return show(e, params, ctx)
  end } })

  vim.cmd.edit(vim.fn.fnameescape(ws .. "/CLAUDE.md"))
  local buf = vim.api.nvim_get_current_buf()
  result.before = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  assert(vim.wait(timeout, function()
    local c = vim.lsp.get_clients({ bufnr = buf, name = "ctxls" })[1]
    return c ~= nil and c.initialized
  end, 20), "the ctxls client did not start")
  local client = vim.lsp.get_clients({ bufnr = buf, name = "ctxls" })[1]
  log("client initialized")

  local params = vim.lsp.util.make_range_params(0, client.offset_encoding)
  params.range = { start = { line = 0, character = 0 }, ["end"] = { line = 0, character = 4 } }
  params.context = { diagnostics = {} }
  local resp = client:request_sync("textDocument/codeAction", params, timeout, buf)
  assert(resp and not resp.err, "codeAction failed: " .. vim.inspect(resp))
  local chosen
  result.action_titles = {}
  for _, a in ipairs(resp.result or {}) do
    table.insert(result.action_titles, a.title)
    if a.title:find("Ask about this selection", 1, true) then
      chosen = a
    end
  end
  assert(chosen, "no 'Ask about this selection' action")
  log("running " .. chosen.title)
  client:exec_cmd(chosen.command, { bufnr = buf })
  assert(vim.wait(timeout, function()
    return vim.api.nvim_buf_get_lines(buf, 0, -1, false)[1] ~= result.before[1]
  end, 20), "the agent's edit never reached the buffer")
  result.after = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  result.modified = vim.bo[buf].modified
  assert(vim.wait(timeout, function()
    return #result.show_document > 0
  end, 20), "no report was shown")
  log("edit applied and report shown")
end, debug.traceback)
finish(ok, not ok and err or nil)
