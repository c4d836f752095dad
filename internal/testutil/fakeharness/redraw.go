package main

import (
	"strings"

	"golang.org/x/text/unicode/norm"
)

// drawText is how each real TUI draws typed or pasted text in its input
// line, as its captures show (testdata/screens/<h>/ready-pasted-*, kept in
// step by TestFakeRedrawMatchesReal): claude composes decomposed accents
// and drops skin-tone modifiers, codex drops the modifiers, opencode keeps
// both; a tab is four spaces on claude, one on codex, two on opencode
// (a raw tab on the terminal would skip over stale cells). Leading spaces
// the fake keeps: the screen readers trim them, as the real TUIs drop them.
func drawText(r role, s string) string {
	switch r {
	case roleClaude:
		return norm.NFC.String(strings.ReplaceAll(dropSkinTones(s), "\t", "    "))
	case roleCodex:
		return strings.ReplaceAll(dropSkinTones(s), "\t", " ")
	case rolePi:
		return strings.ReplaceAll(s, "\t", "    ")
	default:
		return strings.ReplaceAll(s, "\t", "  ")
	}
}

func dropSkinTones(s string) string {
	return strings.Map(func(c rune) rune {
		if c >= 0x1F3FB && c <= 0x1F3FF {
			return -1
		}
		return c
	}, s)
}
