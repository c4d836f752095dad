package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// docs/cli.md's "Error codes" table lists every code of Codes, with the
// same exit status and HTTP status, and no code the table lacks.
func TestDocsListEveryCode(t *testing.T) {
	data, err := os.ReadFile("../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n## Error codes\n")
	if !ok {
		t.Fatal(`docs/cli.md has no "## Error codes" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	row := regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\| ([0-9]+) \\| ([0-9]+|—) \\| [^|]+ \\|$")
	docs := map[Code][2]string{}
	for _, m := range row.FindAllStringSubmatch(section, -1) {
		if _, dup := docs[Code(m[1])]; dup {
			t.Errorf("docs/cli.md lists %s twice", m[1])
		}
		docs[Code(m[1])] = [2]string{m[2], m[3]}
	}
	for _, c := range Codes {
		got, ok := docs[c.Code]
		if !ok {
			t.Errorf("docs/cli.md's Error codes table has no row for %s", c.Code)
			continue
		}
		wantHTTP := "—"
		if c.HTTP != 0 {
			wantHTTP = strconv.Itoa(c.HTTP)
		}
		if want := [2]string{strconv.Itoa(ExitStatus(c.Code)), wantHTTP}; got != want {
			t.Errorf("docs/cli.md: %s is exit %s, HTTP %s; the table says exit %s, HTTP %s", c.Code, got[0], got[1], want[0], want[1])
		}
		delete(docs, c.Code)
	}
	for c := range docs {
		t.Errorf("docs/cli.md lists %s, which is not in api.Codes", c)
	}
}

// A code is in the table once, and every row says what it means.
func TestCodesAreOneTable(t *testing.T) {
	seen := map[Code]bool{}
	for _, c := range Codes {
		if seen[c.Code] {
			t.Errorf("%s is in Codes twice", c.Code)
		}
		seen[c.Code] = true
		if c.Meaning == "" {
			t.Errorf("%s has no meaning", c.Code)
		}
	}
}

// The statuses the routes answer with, as they were before the table.
func TestHTTPStatus(t *testing.T) {
	for code, want := range map[Code]int{
		CodeInvalidArgs: 400, CodeUnauthorized: 401, CodeForbidden: 403, CodeNotFound: 404,
		CodeAgentRunning: 409, CodeAgentExists: 409, CodeAgentStopped: 409, CodeTaskRunning: 409, CodeDrainTimeout: 409,
		CodeConfigError: 422, CodeClaudeNotFound: 424, CodeHarnessNotFound: 424, CodeQueueFull: 429,
		CodeInternal: 500, CodeTmux: 500, CodeDaemonDown: 500, CodeDeliveryFailed: 502, CodeNotReady: 503,
		CodeOutcomeUnknown: 504, "no_such_code": 500,
	} {
		if got := HTTPStatus(code); got != want {
			t.Errorf("HTTPStatus(%s) = %d, want %d", code, got, want)
		}
	}
}

// Errorf keeps a %w argument as the cause: errors.Is and errors.As reach
// it, while the message reads as %v would have printed it, and the JSON
// of the failure is still only its code and message.
func TestErrorfKeepsTheCause(t *testing.T) {
	cause := &fs.PathError{Op: "open", Path: "/x/leo.yaml", Err: fs.ErrPermission}
	err := Errorf(CodeConfigError, "cannot read %s: %w", "/x/leo.yaml", cause)
	if want := "cannot read /x/leo.yaml: open /x/leo.yaml: permission denied"; err.Error() != want {
		t.Fatalf("message %q, want %q", err.Error(), want)
	}
	if !errors.Is(err, fs.ErrPermission) {
		t.Error("errors.Is does not reach the cause")
	}
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe != cause {
		t.Error("errors.As does not reach the cause")
	}
	if CodeOf(fmt.Errorf("outer: %w", err)) != CodeConfigError {
		t.Error("the code is lost behind a wrapper")
	}
	data, jerr := json.Marshal(err)
	if jerr != nil {
		t.Fatal(jerr)
	}
	if body, want := string(data), `{"error":"config_error","message":"cannot read /x/leo.yaml: open /x/leo.yaml: permission denied"}`; body != want {
		t.Errorf("JSON %s, want %s", body, want)
	}

	two := Errorf(CodeInternal, "%w and %w", fs.ErrNotExist, http.ErrServerClosed)
	if !errors.Is(two, fs.ErrNotExist) || !errors.Is(two, http.ErrServerClosed) {
		t.Error("errors.Is does not reach both causes of two %w")
	}
	if plain := Errorf(CodeInternal, "no cause %d", 1); plain.Cause != nil || plain.Error() != "no cause 1" {
		t.Errorf("Errorf without %%w: cause %v, message %q", plain.Cause, plain.Error())
	}
}

// An *Error answers a search for any coded error itself, so a coded cause
// it wraps (a lock held by another daemon, say) never lends its code.
func TestErrorCodeIsTheOuterOne(t *testing.T) {
	err := Errorf(CodeDaemonDown, "no answer: %w", codedCause{})
	var coded interface{ ErrorCode() Code }
	if !errors.As(err, &coded) || coded.ErrorCode() != CodeDaemonDown {
		t.Fatalf("errors.As found code %v, want %s", coded, CodeDaemonDown)
	}
}

type codedCause struct{}

func (codedCause) Error() string   { return "held" }
func (codedCause) ErrorCode() Code { return CodeDaemonRunning }
