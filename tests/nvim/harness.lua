-- Headless Neovim end-to-end scenario for ctxls, run by tests/nvim/test_neovim.py:
--
--   nvim --clean --headless -l tests/nvim/harness.lua
--
-- Environment (all required):
--   CTXLS_SNIPPET   client-nvim/ctxls.lua (sourced as a user would; the scenario only overrides `cmd`,
--                   adds python to `filetypes` the documented way, and records handlers)
--   CTXLS_PYTHON    interpreter that runs `-m ctxls serve`
--   CTXLS_WS        the workspace copy (contains .ctxls.toml, CLAUDE.md, services/billing/...)
--   CTXLS_RESULT    where the JSON result goes (written on success and on failure)
--   CTXLS_TIMEOUT_MS  per-step timeout (default 8000)
--   CTXLS_DIAGNOSTICS "pull" (default, what Neovim 0.11+ does with ctxls) or "push"
-- Exit status: 0 when every check passed, 1 otherwise.

local t0 = vim.uv.hrtime()
local function ms()
  return math.floor((vim.uv.hrtime() - t0) / 1e6)
end

local snippet = assert(os.getenv("CTXLS_SNIPPET"), "CTXLS_SNIPPET not set")
local python = assert(os.getenv("CTXLS_PYTHON"), "CTXLS_PYTHON not set")
local ws = assert(os.getenv("CTXLS_WS"), "CTXLS_WS not set")
local result_path = assert(os.getenv("CTXLS_RESULT"), "CTXLS_RESULT not set")
local timeout = tonumber(os.getenv("CTXLS_TIMEOUT_MS") or "8000")
-- "pull" (Neovim's default: it advertises textDocument/diagnostic, so ctxls answers pulls) or "push" (the
-- client hides its pull support and ignores the server's diagnosticProvider: publishDiagnostics only)
local model = os.getenv("CTXLS_DIAGNOSTICS") or "pull"

-- The python ftplugin calls has('python3'), which probes for a pynvim provider by running Python (~2 s).
-- Nothing here needs remote plugins.
for _, p in ipairs({ "python3", "node", "ruby", "perl" }) do
  vim.g["loaded_" .. p .. "_provider"] = 0
end

local result = {
  ok = false,
  nvim_version = tostring(vim.version()),
  steps = {}, -- "   123ms message"
  timings = {}, -- step name -> ms since start
  messages = {}, -- window/showMessage + window/logMessage from the server
  show_document = {}, -- URIs the server asked to show
}

local function log(msg)
  table.insert(result.steps, string.format("%6dms %s", ms(), msg))
  io.stderr:write(string.format("[ctxls-nvim %6dms] %s\n", ms(), msg))
end

local function mark(name)
  result.timings[name] = ms()
end

local function check(cond, msg)
  if not cond then
    error(msg, 2)
  end
end

local function wait_for(what, fn, t)
  local ok = vim.wait(t or timeout, fn, 10)
  check(ok, string.format("timed out after %dms waiting for %s", t or timeout, what))
end

local function codes_of(buf)
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    out[#out + 1] = tostring(d.code)
  end
  table.sort(out)
  return out
end

local function find_diag(buf, code)
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if tostring(d.code) == code then
      return d
    end
  end
end

local function buf_lines(buf)
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

local function finish(ok, err)
  result.ok = ok
  result.error = err
  mark("done")
  -- Stop every client gracefully (shutdown + exit), then force whatever is left.
  local clients = vim.lsp.get_clients()
  for _, c in ipairs(clients) do
    c:stop()
  end
  local stopped = vim.wait(3000, function()
    return #vim.lsp.get_clients() == 0
  end, 10)
  if not stopped then
    for _, c in ipairs(vim.lsp.get_clients()) do
      c:stop(true)
    end
    vim.wait(2000, function()
      return #vim.lsp.get_clients() == 0
    end, 10)
  end
  -- on_exit callbacks are scheduled; give them a tick
  vim.wait(500, function()
    return result.server_exit ~= nil
  end, 10)
  result.clients_stopped_gracefully = stopped
  result.clients_left = #vim.lsp.get_clients()
  mark("stopped")
  result.elapsed_ms = ms()
  local f = assert(io.open(result_path, "w"))
  f:write(vim.json.encode(result))
  f:close()
  log((ok and "PASS" or "FAIL") .. (err and (": " .. err) or ""))
  os.exit(ok and 0 or 1)
end

local ok, err = xpcall(function()
  -- 1. configure exactly as a user would: source the snippet, then override what the test needs.
  dofile(snippet)
  local snippet_show_document = vim.lsp.config.ctxls.handlers["window/showDocument"]
  check(type(snippet_show_document) == "function", "the snippet lost its window/showDocument handler")
  vim.lsp.config("ctxls", {
    cmd = { python, "-m", "ctxls", "serve" },
    -- the documented way of adding filetypes, so hover can be asked on a source file
    filetypes = { "markdown", "python" },
    -- answered to the server's workspace/configuration; the hover must show this window size
    settings = { ctxls = { window = 1000000 } },
    handlers = {
      ["window/showMessage"] = function(_, params)
        table.insert(result.messages, { kind = "show", type = params.type, message = params.message })
        return vim.NIL
      end,
      ["window/logMessage"] = function(_, params)
        table.insert(result.messages, { kind = "log", type = params.type, message = params.message })
        return vim.NIL
      end,
      ["window/showDocument"] = function(err, params, ctx)
        table.insert(result.show_document, params.uri)
        return snippet_show_document(err, params, ctx)
      end,
    },
    capabilities = model == "push" and { textDocument = { diagnostic = vim.NIL } } or nil,
    on_init = function(c)
      if model == "push" then
        c.server_capabilities.diagnosticProvider = nil
      end
    end,
    on_exit = function(code, signal)
      result.server_exit = { code = code, signal = signal }
    end,
  })
  local resolved = vim.lsp.config.ctxls
  check(vim.fn.executable(resolved.cmd[1]) == 1, "server command is not executable: " .. resolved.cmd[1])
  result.config = {
    cmd = resolved.cmd,
    filetypes = resolved.filetypes,
    root_markers = resolved.root_markers,
    settings = resolved.settings,
  }
  mark("configured")

  -- 2. open the root CLAUDE.md; FileType=markdown makes vim.lsp.enable start and attach the client
  local claude = ws .. "/CLAUDE.md"
  vim.cmd.edit(vim.fn.fnameescape(claude))
  local buf = vim.api.nvim_get_current_buf()
  local win = vim.api.nvim_get_current_win()
  result.filetype = vim.bo[buf].filetype
  check(result.filetype == "markdown", "CLAUDE.md filetype is " .. tostring(result.filetype))
  local original = buf_lines(buf)
  log("opened " .. claude)

  local client
  wait_for("the ctxls client to attach and initialize", function()
    client = vim.lsp.get_clients({ bufnr = buf, name = "ctxls" })[1]
    return client ~= nil and client.initialized
  end)
  mark("initialized")
  result.root_dir = client.root_dir
  result.offset_encoding = client.offset_encoding
  result.server_info = client.server_info
  result.diagnostic_model = client.server_capabilities.diagnosticProvider and "pull" or "push"
  check(result.diagnostic_model == model, "wanted " .. model .. " diagnostics, client uses " .. result.diagnostic_model)
  check(vim.fs.normalize(client.root_dir) == vim.fs.normalize(ws),
    "root_dir " .. tostring(client.root_dir) .. " is not the workspace " .. ws)
  log(("client %d initialized; root %s; encoding %s; diagnostics by %s"):format(
    client.id, client.root_dir, client.offset_encoding, result.diagnostic_model))

  -- 3. diagnostics: CTX301 (missing @docs/missing.md, line 3) and CTX305 (duplicate import, line 5)
  wait_for("CTX301 and CTX305 on CLAUDE.md", function()
    return find_diag(buf, "CTX301") ~= nil and find_diag(buf, "CTX305") ~= nil
  end)
  mark("diagnostics")
  result.diagnostics = vim.tbl_map(function(d)
    return { code = d.code, lnum = d.lnum, col = d.col, end_lnum = d.end_lnum, severity = d.severity,
             source = d.source, message = d.message, namespace = vim.diagnostic.get_namespace(d.namespace).name }
  end, vim.diagnostic.get(buf))
  local dup = find_diag(buf, "CTX305")
  check(find_diag(buf, "CTX301").lnum == 2, "CTX301 expected on line 3, got " .. find_diag(buf, "CTX301").lnum + 1)
  check(dup.lnum == 4, "CTX305 expected on line 5, got " .. (dup.lnum + 1))
  check(dup.source == "ctxls", "CTX305 source is " .. tostring(dup.source))
  log("diagnostics: " .. table.concat(codes_of(buf), ", "))

  -- the snippet's LspAttach autocmd asked for code lenses: the root CLAUDE.md has one on its first line
  wait_for("a code lens on CLAUDE.md", function()
    return #vim.lsp.codelens.get(buf) > 0
  end)
  local lens = vim.lsp.codelens.get(buf)[1]
  result.code_lens = { line = lens.range.start.line, title = lens.command and lens.command.title }
  mark("code_lens")
  log("code lens: " .. tostring(result.code_lens.title))

  -- 4. hover on a deep source file (opened in a split: the client attaches through filetype=python)
  local src = ws .. "/services/billing/tests/test_refund.py"
  mark("before_split")
  vim.cmd("split " .. vim.fn.fnameescape(src))
  mark("split")
  local pybuf = vim.api.nvim_get_current_buf()
  wait_for("ctxls to attach to test_refund.py", function()
    return #vim.lsp.get_clients({ bufnr = pybuf, name = "ctxls" }) > 0
  end)
  mark("source_attached")
  result.same_client_for_source = vim.lsp.get_clients({ bufnr = pybuf, name = "ctxls" })[1].id == client.id
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  local hparams = vim.lsp.util.make_position_params(0, client.offset_encoding)
  local hresp, herr = vim.lsp.buf_request_sync(pybuf, "textDocument/hover", hparams, timeout)
  check(hresp ~= nil, "hover request failed: " .. tostring(herr))
  local h = hresp[client.id]
  check(h and not h.err and h.result, "hover: bad response " .. vim.inspect(h))
  local contents = h.result.contents
  result.hover = type(contents) == "table" and (contents.value or vim.inspect(contents)) or contents
  result.hover_kind = type(contents) == "table" and contents.kind or nil
  mark("hover")
  check(result.hover:find("services/billing/CLAUDE.md", 1, true),
    "hover does not mention services/billing/CLAUDE.md:\n" .. result.hover)
  log(("hover on test_refund.py: %d chars"):format(#result.hover))
  -- the snippet's :CtxlsHover on a file ctxls is not attached to (typescriptreact is not in filetypes)
  vim.cmd.edit(vim.fn.fnameescape(ws .. "/web/components/Button.tsx"))
  local tsxbuf = vim.api.nvim_get_current_buf()
  result.tsx_attached = #vim.lsp.get_clients({ bufnr = tsxbuf }) > 0
  vim.cmd("CtxlsHover")
  local float_text
  wait_for("the :CtxlsHover floating window", function()
    for _, w in ipairs(vim.api.nvim_list_wins()) do
      if vim.api.nvim_win_get_config(w).relative ~= "" then
        float_text = table.concat(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(w), 0, -1, false), "\n")
        return true
      end
    end
  end)
  result.ctxls_hover = float_text
  mark("ctxls_hover")
  check(float_text:find("web/components", 1, true), ":CtxlsHover shows no session for web/components:\n" .. float_text)
  log(":CtxlsHover on Button.tsx: " .. #float_text .. " chars")
  for _, w in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(w).relative ~= "" then
      vim.api.nvim_win_close(w, true)
    end
  end
  vim.cmd.close() -- back to the CLAUDE.md window (pull diagnostics only refresh visible buffers)
  check(vim.api.nvim_get_current_buf() == buf, "did not return to the CLAUDE.md window")

  -- 5. code actions at the duplicate, quick fixes only
  dup = find_diag(buf, "CTX305")
  local lsp_dup = dup.user_data and dup.user_data.lsp
  check(lsp_dup ~= nil, "CTX305 diagnostic carries no LSP payload (user_data.lsp)")
  vim.api.nvim_win_set_cursor(win, { dup.lnum + 1, dup.col })
  local aparams = {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    range = lsp_dup.range,
    context = { diagnostics = { lsp_dup }, only = { "quickfix" }, triggerKind = 1 },
  }
  local aresp, aerr = vim.lsp.buf_request_sync(buf, "textDocument/codeAction", aparams, timeout)
  check(aresp ~= nil, "codeAction request failed: " .. tostring(aerr))
  local a = aresp[client.id]
  check(a and not a.err, "codeAction: bad response " .. vim.inspect(a))
  local actions = a.result or {}
  result.actions = vim.tbl_map(function(x)
    return { title = x.title, kind = x.kind, isPreferred = x.isPreferred, has_edit = x.edit ~= nil,
             command = type(x.command) == "table" and x.command.command or x.command }
  end, actions)
  mark("code_actions")
  local chosen
  for _, x in ipairs(actions) do
    check(x.kind == nil or vim.startswith(x.kind, "quickfix"), "non-quickfix action despite only=quickfix: "
      .. tostring(x.title) .. " (" .. tostring(x.kind) .. ")")
    if x.edit and x.title:find("CTX305", 1, true) and (chosen == nil or (x.isPreferred and not chosen.isPreferred)) then
      chosen = x
    end
  end
  check(chosen ~= nil, "no CTX305 quick fix with an edit among: " .. vim.inspect(result.actions))
  result.chosen = { title = chosen.title, edit = chosen.edit }
  log("quick fix: " .. chosen.title)

  -- 6. apply the WorkspaceEdit as Neovim's own code_action() would, then check the buffer
  local version_before = vim.lsp.util.buf_versions[buf]
  vim.lsp.util.apply_workspace_edit(chosen.edit, client.offset_encoding)
  local after = buf_lines(buf)
  result.buffer_after = after
  result.buffer_changed = vim.lsp.util.buf_versions[buf] ~= version_before
  local expected = vim.list_slice(original, 1, 4)
  vim.list_extend(expected, vim.list_slice(original, 6))
  local n_arch = 0
  for _, l in ipairs(after) do
    if l == "@docs/arch.md" then
      n_arch = n_arch + 1
    end
  end
  result.arch_import_lines = n_arch
  mark("applied")
  check(n_arch == 1, ("expected one @docs/arch.md line after the fix, found %d:\n%s"):format(
    n_arch, table.concat(after, "\n")))
  check(vim.deep_equal(after, expected), "buffer after the fix is not the original minus line 5:\n"
    .. table.concat(after, "\n"))
  log("edit applied: line 5 removed")

  -- 7. save; the duplicate finding must go away (CTX301 stays: it proves diagnostics were recomputed,
  --    not merely cleared)
  vim.cmd.write()
  result.saved_on_disk = vim.deep_equal(vim.fn.readfile(claude), expected)
  check(result.saved_on_disk, "CLAUDE.md on disk does not match the buffer after :write")
  wait_for("CTX305 to disappear after the fix", function()
    return find_diag(buf, "CTX305") == nil and find_diag(buf, "CTX301") ~= nil
  end)
  mark("cleared")
  result.diagnostics_after = codes_of(buf)
  log("after save: " .. table.concat(result.diagnostics_after, ", "))

  -- 8. a file created on disk behind the editor's back (the server's watcher sees it): @docs/missing.md now
  --    resolves, so CTX301 must go away without any edit. Pull clients need the snippet's
  --    workspace/diagnostic/refresh handler for this.
  local fh = assert(io.open(ws .. "/docs/missing.md", "w"))
  fh:write("# Old notes\n\nKept for history.\n")
  fh:close()
  wait_for("CTX301 to disappear after docs/missing.md was created on disk", function()
    return find_diag(buf, "CTX301") == nil
  end)
  mark("disk_change")
  result.diagnostics_after_disk_change = codes_of(buf)
  log("after creating docs/missing.md on disk: " .. table.concat(result.diagnostics_after_disk_change, ", "))

  -- 9. the snippet's :CtxlsBudget opens the report the server writes (window/showDocument). The cursor is
  --    on a blank line on purpose: Neovim's own showDocument handler fails there (E348) and the snippet's
  --    handler has to fall back.
  for i, l in ipairs(buf_lines(buf)) do
    if l == "" then
      vim.api.nvim_win_set_cursor(win, { i, 0 })
      break
    end
  end
  result.cursor_line_before_report = vim.api.nvim_get_current_line()
  vim.cmd("CtxlsBudget")
  wait_for("the budget report to open", function()
    return vim.api.nvim_buf_get_name(0):find("/.ctxls/reports/budget.md", 1, true) ~= nil
  end)
  mark("report")
  result.report_buffer = vim.api.nvim_buf_get_name(0)
  log("budget report opened: " .. result.report_buffer)

  -- 10. the project's auto memory lives outside the workspace (no marker above it): it must attach to the
  --     workspace's client (the snippet's root_dir asks the server, command ctxls.owns), not start a second,
  --     rootless one, and show its CTX105 (lines past 200 never load)
  local mem = os.getenv("CTXLS_MEMORY")
  if mem then
    vim.cmd.edit(vim.fn.fnameescape(mem))
    local membuf = vim.api.nvim_get_current_buf()
    wait_for("ctxls to attach to MEMORY.md", function()
      return #vim.lsp.get_clients({ bufnr = membuf, name = "ctxls" }) > 0
    end)
    result.memory_same_client = vim.lsp.get_clients({ bufnr = membuf, name = "ctxls" })[1].id == client.id
    result.clients_after_memory = #vim.lsp.get_clients({ name = "ctxls" })
    wait_for("CTX105 on MEMORY.md", function()
      return find_diag(membuf, "CTX105") ~= nil
    end)
    mark("memory")
    result.memory_diagnostics = codes_of(membuf)
    result.memory_ctx105_line = find_diag(membuf, "CTX105").lnum
    log("MEMORY.md: " .. table.concat(result.memory_diagnostics, ", "))
  end
end, function(e)
  return debug.traceback(tostring(e), 2)
end)

finish(ok, not ok and tostring(err) or nil)
