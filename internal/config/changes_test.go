package config

import (
	"fmt"
	"testing"
)

func TestChangesNameEachScopeThatDiffersAndNoValue(t *testing.T) {
	parse := func(yaml string) *Config {
		t.Helper()
		c, err := Parse([]byte(yaml), "leo.yaml", WithGetenv(func(k string) string {
			if k == "SECRET" {
				return "hunter2"
			}
			return ""
		}))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	old := parse(`
defaults:
  model: a
templates:
  keep: {model: x}
  edit: {model: x}
  gone: {model: x}
tasks:
  nightly:
    schedule: "0 7 * * *"
    prompt_file: p.md
`)
	same := parse(`
defaults:
  model: a
templates:
  keep: {model: x}
  edit: {model: x}
  gone: {model: x}
tasks:
  nightly:
    schedule: "0 7 * * *"
    prompt_file: p.md
`)
	if got := Changes(old, same); len(got) != 0 {
		t.Fatalf("the same file: %v, want no change", got)
	}
	next := parse(`
defaults:
  model: a
web:
  enabled: true
templates:
  keep: {model: x}
  edit: {model: y, env: {TOKEN: "${SECRET}"}}
  new: {model: x}
tasks:
  nightly:
    schedule: "0 8 * * *"
    prompt_file: p.md
`)
	got := fmt.Sprint(Changes(old, next))
	want := "[{web changed} {templates.edit changed} {templates.gone removed} {templates.new added} {tasks.nightly changed}]"
	if got != want {
		t.Fatalf("changes %s, want %s", got, want)
	}
	if got := fmt.Sprint(Changes(nil, old)); got != "[{defaults changed} {templates.edit added} {templates.gone added} {templates.keep added} {tasks.nightly added}]" {
		t.Fatalf("from nothing: %s", got)
	}
}
