#!/usr/bin/env bash
# Install the real harness CLIs at the versions pinned in versions.env into a
# cache folder (once per set of versions) and print the directory holding
# their commands (claude, codex, opencode) on stdout; progress goes to
# stderr. Needs npm and the npm registry. Install scripts must run: claude and
# opencode fetch their native binary in them.
#
#   LEO_REALCLI_CACHE  cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/leo-realcli)
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
versions="$here/versions.env"

get() {
	local v
	v="$(grep -E "^$1=" "$versions" | tail -n1 | cut -d= -f2-)"
	if [ -z "$v" ]; then
		echo "install.sh: $versions has no $1" >&2
		exit 2
	fi
	printf '%s' "$v"
}
claude="$(get CLAUDE_CODE_VERSION)"
codex="$(get CODEX_VERSION)"
opencode="$(get OPENCODE_VERSION)"

if ! command -v npm >/dev/null 2>&1; then
	echo "install.sh: npm not found (install Node.js and npm)" >&2
	exit 2
fi

root="${LEO_REALCLI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/leo-realcli}"
dir="$root/claude-$claude-codex-$codex-opencode-$opencode"
bin="$dir/node_modules/.bin"
stamp="$dir/.installed"

if [ ! -f "$stamp" ] || [ ! -x "$bin/claude" ] || [ ! -x "$bin/codex" ] || [ ! -x "$bin/opencode" ]; then
	echo "== installing claude $claude, codex $codex, opencode $opencode into $dir" >&2
	rm -rf "$dir"
	mkdir -p "$dir"
	(
		cd "$dir"
		echo '{"private": true}' >package.json
		npm install --no-audit --no-fund --loglevel=error \
			"@anthropic-ai/claude-code@$claude" "@openai/codex@$codex" "opencode-ai@$opencode" >&2
	)
	# A CLI whose install script did not run fails here ("native binary
	# not installed").
	for c in claude codex opencode; do
		if ! "$bin/$c" --version >/dev/null 2>&1; then
			echo "install.sh: $bin/$c --version fails" >&2
			exit 1
		fi
	done
	touch "$stamp"
fi
echo "$bin"
