// Package names holds the one rule for template, task and agent names. It
// is a leaf (no imports) so that the socket client and the CLI's daemon
// commands can check a name without linking the config package.
package names

// Rule says the rule in words, for error messages.
const Rule = "use 1 to 63 lowercase letters, digits and dashes, starting with a letter or digit"

// Valid is the rule for template, task and agent names (they become tmux
// session names and URL path segments): ^[a-z0-9][a-z0-9-]{0,62}$. Checked
// by hand: compiling that regexp at package init cost every leo command
// about 0.1 ms of start-up.
func Valid(name string) bool {
	if len(name) == 0 || len(name) > 63 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' && i > 0) {
			return false
		}
	}
	return true
}
