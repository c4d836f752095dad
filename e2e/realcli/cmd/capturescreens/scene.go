package main

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/blackpaw-studio/leo/e2e/realcli"
	"github.com/blackpaw-studio/leo/internal/harness"
)

// scene is one scenario's real TUI in its capture pane, read with its
// adapter's screen reader: what every scenario does to it (wait for a
// screen, save it, press keys, send a message) in one place.
type scene struct {
	c       *realcli.Capture
	r       harness.ScreenReader
	h       string // the harness
	out     string // the fixtures dir
	size    string // WxH
	version string // the CLI's, as --version says it
	// enterDelay is waited between a paste showing and its Enter (codex
	// takes an Enter within its paste-burst window as a newline).
	enterDelay time.Duration
}

// newScene starts argv (the harness's program and its flags) in c's pane
// at size.
func newScene(c *realcli.Capture, h, bin, size, out string, r harness.ScreenReader, argv ...string) (*scene, error) {
	v, err := realcli.InstalledVersion(filepath.Join(bin, h))
	if err != nil {
		return nil, err
	}
	sc := &scene{c: c, r: r, h: h, out: out, size: size, version: regexp.MustCompile(`\d+\.\d+\.\d+`).FindString(v)}
	w, hh, _ := strings.Cut(size, "x")
	return sc, c.Start(w, hh, argv...)
}

// stable waits until cond holds and the screen stays the same for a
// second; the error (past d) carries the last screen.
func (sc *scene) stable(what string, d time.Duration, cond func(string) bool) (string, error) {
	deadline := time.Now().Add(d)
	last, since := "", time.Now()
	for {
		s := sc.c.Screen()
		if s != last {
			last, since = s, time.Now()
		}
		if cond(s) && time.Since(since) >= time.Second {
			return s, nil
		}
		if time.Now().After(deadline) {
			return s, fmt.Errorf("%s: not seen within %s:\n%s", what, d, s)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// idle: the input line shows, empty.
func (sc *scene) idle(s string) bool {
	got := sc.r.Classify(s)
	return got.State == harness.ScreenReady && got.Input == ""
}

// save writes s as the fixture <out>/<h>/<name>_<size>_v<version>.txt.
func (sc *scene) save(name, s string) error {
	p := filepath.Join(sc.out, sc.h, fmt.Sprintf("%s_%s_v%s.txt", name, sc.size, sc.version))
	log.Printf("%s: %+v", p, sc.r.Classify(s))
	return os.WriteFile(p, []byte(s), 0o644)
}

// keys presses k (tmux send-keys).
func (sc *scene) keys(k ...string) error {
	if o, err := sc.c.Tmux("", append([]string{"send-keys", "-t", "a"}, k...)...); err != nil {
		return fmt.Errorf("send-keys: %v %s", err, o)
	}
	return nil
}

// send pastes text, waits until the reader says it landed, and submits it.
func (sc *scene) send(text string) error {
	if o, err := sc.c.Tmux(text, "load-buffer", "-b", "m", "-"); err != nil {
		return fmt.Errorf("load-buffer: %v %s", err, o)
	}
	if o, err := sc.c.Tmux("", "paste-buffer", "-p", "-d", "-b", "m", "-t", "a"); err != nil {
		return fmt.Errorf("paste-buffer: %v %s", err, o)
	}
	if _, err := sc.stable("pasted", 20*time.Second, func(s string) bool { return sc.r.Landed(sc.r.Classify(s), text) }); err != nil {
		return err
	}
	time.Sleep(sc.enterDelay)
	return sc.keys("Enter")
}
