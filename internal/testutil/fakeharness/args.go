package main

import "strings"

// parsedArgs is a lenient command line: known value flags take the next
// argument (or =value), everything else starting with "-" is a boolean,
// the rest are positionals. "--" ends flags.
type parsedArgs struct {
	flags map[string][]string // by canonical (long) name
	pos   []string
}

func (p parsedArgs) has(name string) bool { _, ok := p.flags[name]; return ok }

// get is the flag's last value ("" when absent or given without one).
func (p parsedArgs) get(name string) string {
	v := p.flags[name]
	if len(v) == 0 {
		return ""
	}
	return v[len(v)-1]
}

// getOr is get, or def when that is "".
func (p parsedArgs) getOr(name, def string) string {
	if v := p.get(name); v != "" {
		return v
	}
	return def
}

// flagSpec maps every spelling to its canonical name and whether it takes
// a value. optional: takes a value only if the next arg is not a flag.
type flagSpec struct {
	name     string
	value    bool
	optional bool
}

func parseArgs(args []string, specs map[string]flagSpec) parsedArgs {
	p := parsedArgs{flags: map[string][]string{}}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			p.pos = append(p.pos, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			p.pos = append(p.pos, a)
			continue
		}
		name, val, hasVal := strings.Cut(a, "=")
		spec, known := specs[name]
		if !known {
			spec = flagSpec{name: strings.TrimLeft(name, "-")}
		}
		switch {
		case hasVal:
			p.flags[spec.name] = append(p.flags[spec.name], val)
		case spec.value && spec.optional:
			if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				p.flags[spec.name] = append(p.flags[spec.name], args[i+1])
				i++
			} else {
				p.flags[spec.name] = append(p.flags[spec.name], "")
			}
		case spec.value:
			if i+1 < len(args) {
				p.flags[spec.name] = append(p.flags[spec.name], args[i+1])
				i++
			} else {
				p.flags[spec.name] = append(p.flags[spec.name], "")
			}
		default:
			p.flags[spec.name] = append(p.flags[spec.name], "")
		}
	}
	return p
}

func specs(list ...any) map[string]flagSpec {
	m := map[string]flagSpec{}
	for i := 0; i < len(list); i += 2 {
		names := strings.Split(list[i].(string), ",")
		s := list[i+1].(flagSpec)
		s.name = strings.TrimLeft(names[0], "-")
		for _, n := range names {
			m[n] = s
		}
	}
	return m
}

var (
	val = flagSpec{value: true}
	opt = flagSpec{value: true, optional: true}
	bl  = flagSpec{}
)

var claudeFlags = specs(
	"--session-id", val, "--resume,-r", opt, "--model", val, "--permission-mode", val,
	"--agent", val, "--allowedTools,--allowed-tools", val, "--disallowedTools,--disallowed-tools", val,
	"--append-system-prompt", val, "--system-prompt", val, "--mcp-config", val,
	"--channels", val, "--dangerously-load-development-channels", val,
	"--output-format", val, "--input-format", val, "--max-turns", val, "--add-dir", val,
	"--settings", val, "--fallback-model", val,
	"--print,-p", bl, "--verbose", bl, "--continue,-c", bl, "--fork-session", bl,
	"--dangerously-skip-permissions", bl, "--remote-control", bl,
)

var codexFlags = specs(
	"--ask-for-approval,-a", val, "--model,-m", val, "--sandbox,-s", val, "--config,-c", val,
	"--profile,-p", val, "--cd,-C", val, "--image,-i", val, "--output-last-message,-o", val,
	"--output-schema", val, "--color", val, "--add-dir", val,
	"--json,--experimental-json", bl, "--skip-git-repo-check", bl, "--full-auto", bl,
	"--dangerously-bypass-approvals-and-sandbox", bl, "--ephemeral", bl, "--last", bl,
	"--search", bl, "--oss", bl, "--all", bl,
)

var opencodeFlags = specs(
	"--model,-m", val, "--session,-s", val, "--format", val, "--dir", val, "--agent", val,
	"--port", val, "--hostname", val, "--title", val, "--attach", val, "--file,-f", val,
	"--variant", val, "--log-level", val, "--max-count,-n", val, "--prompt", val,
	"--continue,-c", bl, "--fork", bl, "--print-logs", bl, "--thinking", bl,
	"--auto,--yolo,--dangerously-skip-permissions", bl,
)
