// Command capturestreams records the real CLIs' headless event streams
// (stdout of the adapters' Headless argv, stdin at EOF) against the test
// model server, for the stream parsers' tests:
//
//	go run ./e2e/realcli/cmd/capturestreams -bin "$LEO_REALCLI_BIN" [-harness codex] [-scenario first,resume]
//
// Each scenario's stdout goes to
// internal/harness/<h>/testdata/streams/<scenario>_v<version>.jsonl and a
// sidecar .meta.json says how the run ended (exit code, time, the model
// server's requests). Scenarios:
//
//	first      a fresh run answered normally
//	resume     a second run resuming the first's session
//	transient  the first two turn requests answered 500, then normally
//	cutonce    the first turn request's stream dropped, then normally
//	http500    every turn request answered 500
//	http401    every turn request answered 401
//	cut        every turn request's stream dropped before any text
//	limited    every turn request answered the vendor's usage/rate limit
//	           (modelserver.LimitReply) with a reset 90 s away
//	limitonce  the first turn request answered the limit with a reset 5 s
//	           away, then normally: what a CLI that waits a limit out does
//
// claude retries a 5xx ten times with growing delays; CLAUDE_CODE_MAX_RETRIES=2
// bounds that here (noted in the meta). Every run is bounded by -timeout;
// a run killed at the bound is recorded as such.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/blackpaw-studio/leo/e2e/realcli"
	"github.com/blackpaw-studio/leo/internal/harness"
	_ "github.com/blackpaw-studio/leo/internal/harness/all"
	"github.com/blackpaw-studio/leo/internal/testutil/modelserver"
)

var allScenarios = []string{"first", "resume", "transient", "cutonce", "http500", "http401", "cut", "limited", "limitonce"}

type meta struct {
	Harness  string   `json:"harness"`
	Version  string   `json:"version"`
	Scenario string   `json:"scenario"`
	Exit     int      `json:"exit"`
	TimedOut bool     `json:"timed_out,omitempty"`
	Seconds  float64  `json:"seconds"`
	Env      []string `json:"env,omitempty"` // capture-only knobs set for this run
	Requests []string `json:"requests"`
	// CarriesFirst (resume): a turn request of this run held the first
	// run's marker, i.e. the conversation was resumed.
	CarriesFirst bool   `json:"carries_first,omitempty"`
	Stderr       string `json:"stderr_tail,omitempty"`
}

func main() {
	bin := flag.String("bin", os.Getenv(realcli.BinDirEnv), "`dir` holding the CLIs of realcli.CLIs")
	only := flag.String("harness", "", "comma list of harnesses (default all)")
	scen := flag.String("scenario", "", "comma list of scenarios (default all)")
	out := flag.String("out", "internal/harness", "adapters' `dir` (run from the repo root)")
	timeout := flag.Duration("timeout", 4*time.Minute, "bound on one run")
	flag.Parse()
	if *bin == "" {
		fmt.Fprintln(os.Stderr, "capturestreams: -bin or LEO_REALCLI_BIN is required")
		os.Exit(2)
	}
	hs := realcli.Harnesses
	if *only != "" {
		hs = strings.Split(*only, ",")
	}
	scs := allScenarios
	if *scen != "" {
		scs = strings.Split(*scen, ",")
	}
	var wg sync.WaitGroup
	failed := false
	var mu sync.Mutex
	for _, h := range hs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := capture(h, *bin, *out, scs, *timeout); err != nil {
				mu.Lock()
				failed = true
				mu.Unlock()
				fmt.Fprintf(os.Stderr, "%s: %v\n", h, err)
			}
		}()
	}
	wg.Wait()
	if failed {
		os.Exit(1)
	}
}

// streamID is the conversation id a's event stream names in stdout.
func streamID(a harness.Harness, stdout []byte) string {
	es, ok := a.(harness.EventStreamer)
	if !ok {
		return ""
	}
	s := es.NewEventStream()
	for _, l := range bytes.Split(stdout, []byte("\n")) {
		s.Line(l)
	}
	return s.Result().SessionID
}

func capture(h, bin, outRoot string, scenarios []string, timeout time.Duration) error {
	a, ok := harness.Lookup(h)
	if !ok {
		return fmt.Errorf("unknown harness %q", h)
	}
	version, err := realcli.InstalledVersion(filepath.Join(bin, h))
	if err != nil {
		return err
	}
	version = versionNumber(version)
	ms, err := modelserver.New()
	if err != nil {
		return err
	}
	defer ms.Close()
	home, err := os.MkdirTemp("", "cap-"+h+"-")
	if err != nil {
		return err
	}
	defer func() {
		realcli.KillUnder(home)
		_ = os.RemoveAll(home)
	}()
	ws := filepath.Join(home, "ws")
	if err := os.MkdirAll(ws, 0o700); err != nil {
		return err
	}
	if err := realcli.Setup(h, home, ms.URL); err != nil {
		return err
	}
	env := map[string]string{"PATH": bin + ":/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}
	for k, v := range realcli.Dirs(home) {
		env[k] = v
	}
	hv, _ := realcli.Env(h, ms.URL)
	for k, v := range hv {
		env[k] = v
	}
	dir := filepath.Join(outRoot, h, "testdata", "streams")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	firstID := ""
	for _, sc := range scenarios {
		spec := harness.LaunchSpec{Name: "cap", Workspace: ws, Prompt: fmt.Sprintf("say hello LEO-%s-%s please", sc, h)}
		var extra []string
		var fails atomic.Int32 // the responder runs on the server's goroutines
		switch sc {
		case "first":
			ms.SetResponder(nil)
		case "resume":
			if firstID == "" {
				return errors.New("resume: no session id from the first run (capture first with resume)")
			}
			spec.SessionID, spec.Resume = firstID, true
			ms.SetResponder(nil)
		case "transient", "cutonce":
			ms.SetResponder(func(r modelserver.Request) modelserver.Reply {
				if r.Side {
					return modelserver.DefaultResponder(r)
				}
				n := fails.Add(1)
				if sc == "transient" && n <= 2 {
					return modelserver.Reply{Status: 500}
				}
				if sc == "cutonce" && n <= 1 {
					return modelserver.Reply{Text: "x", Cut: true}
				}
				return modelserver.DefaultResponder(r)
			})
		case "http500", "http401", "cut":
			ms.SetResponder(func(r modelserver.Request) modelserver.Reply {
				if r.Side {
					return modelserver.DefaultResponder(r)
				}
				switch sc {
				case "http500":
					return modelserver.Reply{Status: 500}
				case "http401":
					return modelserver.Reply{Status: 401}
				}
				return modelserver.Reply{Text: "x", Cut: true}
			})
		case "limited", "limitonce":
			reset := time.Now().Add(90 * time.Second)
			if sc == "limitonce" {
				reset = time.Now().Add(5 * time.Second)
			}
			ms.SetResponder(func(r modelserver.Request) modelserver.Reply {
				if r.Side {
					return modelserver.DefaultResponder(r)
				}
				if sc == "limitonce" && fails.Add(1) > 1 {
					return modelserver.DefaultResponder(r)
				}
				return modelserver.LimitReply(r.API, reset, time.Now())
			})
		default:
			return fmt.Errorf("unknown scenario %q", sc)
		}
		if h == "claude" && (sc == "http500" || sc == "cut" || sc == "transient" || sc == "cutonce" || sc == "limited") {
			extra = append(extra, "CLAUDE_CODE_MAX_RETRIES=2")
		}
		cmd, err := a.Headless(spec)
		if err != nil {
			return fmt.Errorf("%s: Headless: %w", sc, err)
		}
		before := len(ms.Requests())
		stdout, m, err := run(bin, cmd, env, extra, timeout)
		if err != nil {
			return fmt.Errorf("%s: %w", sc, err)
		}
		m.Harness, m.Version, m.Scenario, m.Env = h, version, sc, extra
		for _, r := range ms.Requests()[before:] {
			line := fmt.Sprintf("%s %s %d", r.Method, r.Path, r.Status)
			if r.Side {
				line += " side"
			}
			if len(r.Markers) > 0 {
				line += " " + strings.Join(r.Markers, " ")
			}
			m.Requests = append(m.Requests, line)
			if sc == "resume" && !r.Side && bytes.Contains(r.Body, []byte(fmt.Sprintf("LEO-first-%s", h))) {
				m.CarriesFirst = true
			}
		}
		if sc == "first" {
			firstID = streamID(a, stdout)
		}
		base := filepath.Join(dir, fmt.Sprintf("%s_v%s", sc, version))
		if err := os.WriteFile(base+".jsonl", stdout, 0o644); err != nil {
			return err
		}
		mb, _ := json.MarshalIndent(m, "", "  ")
		if err := os.WriteFile(base+".meta.json", append(mb, '\n'), 0o644); err != nil {
			return err
		}
		fmt.Printf("%s %s: exit %d timed_out=%v %.1fs, %d bytes, %d requests\n", h, sc, m.Exit, m.TimedOut, m.Seconds, len(stdout), len(m.Requests))
	}
	return nil
}

func run(bin string, c harness.Command, env map[string]string, extra []string, timeout time.Duration) ([]byte, meta, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(bin, c.Argv[0]), c.Argv[1:]...)
	cmd.Dir = c.Dir
	var envList []string
	for k, v := range env {
		envList = append(envList, k+"="+v)
	}
	for k, v := range c.Env {
		envList = append(envList, k+"="+v)
	}
	envList = append(envList, extra...)
	sort.Strings(envList)
	cmd.Env = envList
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	m := meta{Seconds: time.Since(start).Round(100 * time.Millisecond).Seconds()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		m.Exit = ee.ExitCode()
	default:
		return nil, m, err
	}
	m.TimedOut = ctx.Err() != nil
	s := stderr.String()
	if len(s) > 2000 {
		s = s[len(s)-2000:]
	}
	m.Stderr = s
	return stdout.Bytes(), m, nil
}

// versionNumber is the first dotted number in a --version line
// ("2.1.197 (Claude Code)", "codex-cli 0.171.0", "1.18.33").
func versionNumber(s string) string {
	if m := regexp.MustCompile(`\d+\.\d+\.\d+`).FindString(s); m != "" {
		return m
	}
	return strings.ReplaceAll(s, " ", "_")
}
