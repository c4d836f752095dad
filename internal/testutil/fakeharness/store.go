package main

import (
	"bufio"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/google/uuid"
)

// ---- claude: transcripts ----------------------------------------------------

func claudeConfigDir() string {
	if d := os.Getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return d
	}
	return filepath.Join(homeDir(), ".claude")
}

// claudeTranscript is where claude keeps session id's transcript for the
// current directory.
func claudeTranscript(id string) string {
	return filepath.Join(claudeConfigDir(), "projects", nonAlnumToDash(claudeCwd()), id+".jsonl")
}

func appendJSONL(path string, v any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.Write(append(b, '\n'))
	return err
}

func nowStamp() string { return time.Now().UTC().Format("2006-01-02T15:04:05.000Z") }

// claudeRecord is one transcript line shaped like the real claude's (the
// fields leo reads: type, sessionId, timestamp, isMeta/isSidechain, and
// message.content, a string for what the user typed or pasted).
func claudeRecord(id, kind, text string) map[string]any {
	return map[string]any{
		"type": kind, "sessionId": id, "cwd": claudeCwd(), "uuid": uuid.NewString(), "timestamp": nowStamp(),
		"parentUuid": nil, "isSidechain": false, "userType": "external", "entrypoint": "cli", "version": "0.0.0-fake",
		"message": map[string]any{"role": kind, "content": text},
	}
}

// claudeTrusted reads ~/.claude.json (or $CLAUDE_CONFIG_DIR/.claude.json)
// projects[cwd].hasTrustDialogAccepted, as the real claude does.
func claudeStatePath() string {
	if d := os.Getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return filepath.Join(d, ".claude.json")
	}
	return filepath.Join(homeDir(), ".claude.json")
}

func claudeTrusted() bool {
	var st struct {
		Projects map[string]struct {
			HasTrustDialogAccepted bool `json:"hasTrustDialogAccepted"`
		} `json:"projects"`
	}
	b, err := os.ReadFile(claudeStatePath())
	if err != nil || json.Unmarshal(b, &st) != nil {
		return false
	}
	return st.Projects[claudeCwd()].HasTrustDialogAccepted
}

func claudeRecordTrust() {
	path := claudeStatePath()
	st := map[string]any{}
	if b, err := os.ReadFile(path); err == nil {
		_ = json.Unmarshal(b, &st)
	}
	projects, _ := st["projects"].(map[string]any)
	if projects == nil {
		projects = map[string]any{}
	}
	p, _ := projects[claudeCwd()].(map[string]any)
	if p == nil {
		p = map[string]any{}
	}
	p["hasTrustDialogAccepted"] = true
	projects[claudeCwd()] = p
	st["projects"] = projects
	b, _ := json.MarshalIndent(st, "", "  ")
	_ = writeAtomic(path, b)
}

// ---- codex: rollouts --------------------------------------------------------

func codexHome() string {
	if d := os.Getenv("CODEX_HOME"); d != "" {
		return d
	}
	return filepath.Join(homeDir(), ".codex")
}

// newCodexRollout creates the rollout file of a new thread and returns its
// path; the first line is the session_meta codex writes.
func newCodexRollout(id, originator string) (string, error) {
	now := time.Now()
	dir := filepath.Join(codexHome(), "sessions", now.Format("2006"), now.Format("01"), now.Format("02"))
	path := filepath.Join(dir, "rollout-"+now.Format("2006-01-02T15-04-05")+"-"+id+".jsonl")
	meta := map[string]any{
		"timestamp": nowStamp(), "type": "session_meta",
		"payload": map[string]any{
			"id": id, "timestamp": nowStamp(), "cwd": cwd(), "originator": originator,
			"cli_version": codexVersion + "-fake", "source": "cli",
		},
	}
	return path, appendJSONL(path, meta)
}

// findCodexRollout finds the rollout of thread id in either layout
// (rollout-<ts>-<id>.jsonl, or rollout-<ts>-<id>/rollout.jsonl).
func findCodexRollout(id string) string {
	var found string
	root := filepath.Join(codexHome(), "sessions")
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || found != "" {
			return nil
		}
		base := d.Name()
		if !d.IsDir() && strings.HasPrefix(base, "rollout-") && strings.HasSuffix(base, "-"+id+".jsonl") {
			found = p
		}
		if d.IsDir() && strings.HasPrefix(base, "rollout-") && strings.HasSuffix(base, "-"+id) {
			if _, err := os.Stat(filepath.Join(p, "rollout.jsonl")); err == nil {
				found = filepath.Join(p, "rollout.jsonl")
			}
		}
		return nil
	})
	return found
}

// codexMessage is a response_item message line; provenance ("user" or
// "harness") marks who wrote a user-role item, as codex 0.171.0 does.
func codexMessage(role, text, provenance string) map[string]any {
	ct := "input_text"
	if role == "assistant" {
		ct = "output_text"
	}
	payload := map[string]any{"type": "message", "role": role, "content": []any{map[string]any{"type": ct, "text": text}}}
	if provenance != "" {
		payload["internal_chat_message_metadata_passthrough"] = map[string]any{
			"content_item_metadata": []any{map[string]any{"provenance": map[string]any{"type": provenance}}},
		}
	}
	return map[string]any{"timestamp": nowStamp(), "type": "response_item", "payload": payload}
}

// codexEvent is an event_msg line.
func codexEvent(payload map[string]any) map[string]any {
	return map[string]any{"timestamp": nowStamp(), "type": "event_msg", "payload": payload}
}

// codexTrusted looks for [projects."<cwd>"] with trust_level = "trusted"
// in $CODEX_HOME/config.toml (a line scan; enough for the files leo and
// the fake write).
func codexTrusted() bool {
	b, err := os.ReadFile(filepath.Join(codexHome(), "config.toml"))
	if err != nil {
		return false
	}
	dir := cwd()
	headers := map[string]bool{
		`[projects."` + dir + `"]`: true,
		`[projects.'` + dir + `']`: true,
	}
	in := false
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			in = headers[line]
			continue
		}
		if in {
			k, v, ok := strings.Cut(line, "=")
			if ok && strings.TrimSpace(k) == "trust_level" && strings.Trim(strings.TrimSpace(v), `"'`) == "trusted" {
				return true
			}
		}
	}
	return false
}

func codexRecordTrust() {
	path := filepath.Join(codexHome(), "config.toml")
	b, _ := os.ReadFile(path)
	s := string(b)
	if s != "" && !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	s += fmt.Sprintf("\n[projects.%q]\ntrust_level = \"trusted\"\n", cwd())
	_ = os.MkdirAll(filepath.Dir(path), 0o755)
	_ = writeAtomic(path, []byte(s))
}

// ---- opencode: session list -------------------------------------------------

type ocSession struct {
	ID        string `json:"id"`
	Title     string `json:"title"`
	Updated   int64  `json:"updated"`
	Created   int64  `json:"created"`
	ProjectID string `json:"projectId"`
	Directory string `json:"directory"`
}

func opencodeDataDir() string {
	base := os.Getenv("XDG_DATA_HOME")
	if base == "" {
		base = filepath.Join(homeDir(), ".local", "share")
	}
	return filepath.Join(base, "opencode")
}

func opencodeStorePath() string { return filepath.Join(opencodeDataDir(), "fake-sessions.json") }

// withOpencodeStore runs f on the session list under an exclusive lock,
// writing it back atomically if f reports a change.
func withOpencodeStore(f func(list []ocSession) ([]ocSession, bool)) error {
	dir := opencodeDataDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	lf, err := os.OpenFile(filepath.Join(dir, "fake-sessions.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer lf.Close()
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	var list []ocSession
	if b, err := os.ReadFile(opencodeStorePath()); err == nil {
		_ = json.Unmarshal(b, &list)
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	list, changed := f(list)
	if !changed {
		return nil
	}
	b, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(opencodeStorePath(), b)
}

func opencodeFind(id string) (ocSession, bool) {
	var s ocSession
	var ok bool
	_ = withOpencodeStore(func(list []ocSession) ([]ocSession, bool) {
		for _, x := range list {
			if x.ID == id {
				s, ok = x, true
			}
		}
		return list, false
	})
	return s, ok
}

// opencodeTouch records a turn in session id (creating it when id is
// empty) and returns the id.
func opencodeTouch(id, dir, title string) string {
	now := time.Now().UnixMilli()
	_ = withOpencodeStore(func(list []ocSession) ([]ocSession, bool) {
		for i := range list {
			if list[i].ID == id {
				list[i].Updated = now
				return list, true
			}
		}
		if id == "" {
			id = newOpencodeID()
		}
		if len(title) > 50 {
			title = title[:50]
		}
		return append(list, ocSession{ID: id, Title: title, Created: now, Updated: now, ProjectID: "global", Directory: dir}), true
	})
	return id
}

func opencodeList() []ocSession {
	var out []ocSession
	_ = withOpencodeStore(func(list []ocSession) ([]ocSession, bool) {
		out = append(out, list...)
		return list, false
	})
	sort.SliceStable(out, func(i, j int) bool { return out[i].Updated > out[j].Updated })
	if out == nil {
		out = []ocSession{}
	}
	return out
}

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

func newOpencodeID() string {
	var r [14]byte
	_, _ = rand.Read(r[:])
	var b strings.Builder
	b.WriteString("ses_")
	b.WriteString(fmt.Sprintf("%012x", time.Now().UnixMilli()))
	for _, c := range r {
		b.WriteByte(base62[int(c)%len(base62)])
	}
	return b.String()
}

func writeAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".fake-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}
