#!/usr/bin/env bash
# Install the real harness CLIs at the versions pinned in versions.env into a
# cache folder (once per set of versions) and print the directory holding
# their commands (claude, codex, opencode, pi) on stdout; progress goes to
# stderr. Needs npm and the npm registry. Install scripts must run: claude and
# opencode fetch their native binary in them.
#
#   install.sh            the pins, in <cache>/claude-<v>-codex-<v>-opencode-<v>-pi-<v>
#   install.sh --latest   the newest on npm (npm view <pkg>@latest), in
#                         <cache>/latest (reinstalled when npm has newer ones);
#                         never in a pinned folder (make test-real-latest)
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
latest=false
case "${1:-}" in
"") ;;
--latest) latest=true ;;
*)
	echo "usage: install.sh [--latest]" >&2
	exit 2
	;;
esac

if ! command -v npm >/dev/null 2>&1; then
	echo "install.sh: npm not found (install Node.js and npm)" >&2
	exit 2
fi

# newest prints the version npm's latest tag names for package $1.
newest() {
	local v
	if ! v="$(npm view "$1@latest" version 2>/dev/null)" || [ -z "$v" ]; then
		echo "install.sh: npm view $1@latest version failed (is the npm registry reachable?)" >&2
		exit 1
	fi
	printf '%s' "$v"
}

# The CLIs, as command:npm package:versions.env key (realcli.CLIs says the
# same); the folder is named after them in this order.
clis="claude:@anthropic-ai/claude-code:CLAUDE_CODE_VERSION
codex:@openai/codex:CODEX_VERSION
opencode:opencode-ai:OPENCODE_VERSION
pi:@mariozechner/pi-coding-agent:PI_VERSION"

root="${LEO_REALCLI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/leo-realcli}"
want=""
specs=()
cmds=()
while IFS=: read -r cmd pkg key; do
	if $latest; then
		v="$(newest "$pkg")"
	else
		v="$(get "$key")"
	fi
	want="${want:+$want-}$cmd-$v"
	specs+=("$pkg@$v")
	cmds+=("$cmd")
done <<<"$clis"
if $latest; then
	echo "== newest on npm: $want" >&2
	dir="$root/latest"
else
	dir="$root/$want"
fi
bin="$dir/node_modules/.bin"
# The stamp holds the set of versions installed. A pinned folder's name
# says its versions (its stamp need only exist; older ones are empty); the
# latest folder is reinstalled when npm's newest differ from its stamp.
stamp="$dir/.installed"
current=false
if [ -f "$stamp" ] && { ! $latest || [ "$(cat "$stamp")" = "$want" ]; }; then
	current=true
fi
for c in "${cmds[@]}"; do
	[ -x "$bin/$c" ] || current=false
done

if ! $current; then
	echo "== installing $want into $dir" >&2
	rm -rf "$dir"
	mkdir -p "$dir"
	(
		cd "$dir"
		echo '{"private": true}' >package.json
		npm install --no-audit --no-fund --loglevel=error "${specs[@]}" >&2
	)
	# A CLI whose install script did not run fails here ("native binary
	# not installed").
	for c in "${cmds[@]}"; do
		if ! "$bin/$c" --version >/dev/null 2>&1; then
			echo "install.sh: $bin/$c --version fails" >&2
			exit 1
		fi
	done
	printf '%s\n' "$want" >"$stamp"
fi
echo "$bin"
