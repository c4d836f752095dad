package cli

import (
	"os/exec"
	"strings"
	"testing"
)

func TestLooksSecret(t *testing.T) {
	for _, name := range []string{"CODEX_API_KEY", "ANTHROPIC_AUTH_TOKEN", "Authorization", "db_password",
		"GITHUB_TOKEN", "client_secret", "AWS_SECRET_ACCESS_KEY", "GOOGLE_APPLICATION_CREDENTIALS", "apiKey"} {
		if !looksSecret(name) {
			t.Errorf("%s should look secret", name)
		}
	}
	for _, name := range []string{"HOME", "PATH", "ANTHROPIC_BASE_URL", "OPENCODE_CONFIG_CONTENT", "permission", "LEO_HOME"} {
		if looksSecret(name) {
			t.Errorf("%s should not look secret", name)
		}
	}
}

func TestScrubber(t *testing.T) {
	s := newScrubber(map[string]string{"A": "hunter22", "B": "1", "C": "hunter22-extended", "D": ""})
	cases := map[string]string{
		"hunter22":                  masked,
		"pw=hunter22;":              "pw=***;",
		"x hunter22-extended y":     "x *** y", // the longer secret wins
		"1":                         masked,    // a short value only when whole
		"version 1.2.1":             "version 1.2.1",
		"nothing to see":            "nothing to see",
		"hunter22 and hunter22 too": "*** and *** too",
	}
	for in, want := range cases {
		if got := s.scrub(in); got != want {
			t.Errorf("scrub(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMaskJSON(t *testing.T) {
	s := newScrubber(map[string]string{"X": "s3cr3t-value"})
	in := `{"mcp":{"leo":{"headers":{"Authorization":"Bearer abc"},"environment":{"API_KEY":"k","HOME":"/h"}}},` +
		`"provider":{"x":{"options":{"apiKey":"zzz","baseURL":"https://h/s3cr3t-value"}}},"list":["s3cr3t-value"]}`
	got := s.maskJSON(in)
	for _, leak := range []string{"Bearer abc", `"k"`, "zzz", "s3cr3t-value"} {
		if strings.Contains(got, leak) {
			t.Errorf("maskJSON leaked %q: %s", leak, got)
		}
	}
	mustContain(t, "masked JSON", got, `"HOME":"/h"`, `"Authorization":"***"`, `"apiKey":"***"`, `"baseURL":"https://h/***"`)
	if got := s.maskJSON("not json s3cr3t-value"); got != "not json ***" {
		t.Errorf("non-JSON: %q", got)
	}
}

func TestMaskArgvAndEnv(t *testing.T) {
	s := newScrubber(map[string]string{"K": "topsecret"})
	argv := maskArgv(s, []string{"tool", "--api-key=abc", "-c", "mcp.env.LEO_TOKEN=xyz", "-c", "sandbox=read-only",
		`{"token":"t","a":"topsecret"}`, "say topsecret"})
	want := []string{"tool", "--api-key=***", "-c", "mcp.env.LEO_TOKEN=***", "-c", "sandbox=read-only",
		`{"a":"***","token":"***"}`, "say ***"}
	if strings.Join(argv, "|") != strings.Join(want, "|") {
		t.Errorf("maskArgv = %q\nwant      %q", argv, want)
	}

	env := maskEnv(s, map[string]string{"K": "topsecret", "PLAIN": "p"},
		map[string]string{"SOME_TOKEN": "v", "OVERLAY": `{"x":"topsecret"}`, "VISIBLE": "v"})
	got := map[string]envVarJSON{}
	for _, v := range env {
		got[v.Name] = v
	}
	if got["K"].Value != masked || got["PLAIN"].Value != masked || got["SOME_TOKEN"].Value != masked {
		t.Errorf("env = %+v", env)
	}
	if got["OVERLAY"].Value != `{"x":"***"}` || !got["OVERLAY"].Masked {
		t.Errorf("overlay = %+v", got["OVERLAY"])
	}
	if got["VISIBLE"].Value != "v" || got["VISIBLE"].Masked || got["VISIBLE"].Source != "harness" {
		t.Errorf("visible = %+v", got["VISIBLE"])
	}
	if env[0].Name != "K" || env[len(env)-1].Name != "VISIBLE" {
		t.Errorf("env not sorted: %+v", env)
	}
}

func TestShellQuote(t *testing.T) {
	cases := map[string]string{
		"plain-arg_1.2:/x": "plain-arg_1.2:/x",
		"two words":        "'two words'",
		"it's":             `'it'\''s'`,
		"line\nnext":       `$'line\nnext'`,
		"a'b\n":            `$'a\'b\n'`,
		"":                 "''",
	}
	for in, want := range cases {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
	// Each quoting reads back as the same bytes in a real shell (bash: $'…'
	// is also in POSIX.1-2024), C1 controls and invalid UTF-8 included.
	for _, in := range []string{
		"plain", "two words", "it's", "line\nnext", "a'b\n", "back\\slash\n", "tab\there",
		"ctl\x01\x1f\x7f", "nel\u0085é\n", "bad\xffbyte", "bad\xff\nbyte", "é\n\u2028",
	} {
		out, err := exec.Command("bash", "-c", "printf %s "+shellQuote(in)).Output()
		if err != nil || string(out) != in {
			t.Errorf("bash reads shellQuote(%q) = %s back as %q (%v)", in, shellQuote(in), out, err)
		}
	}
	long := strings.Repeat("é", maxShownArg)
	if got := shorten(long); !strings.HasSuffix(got, "… (800 bytes)") || !strings.HasPrefix(got, "é") {
		t.Errorf("shorten = %q", got[len(got)-20:])
	}
}
