package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/statefile"
)

// Record is one agent as state/agents.json keeps it. It never holds an env
// value: env is re-resolved from leo.yaml at every launch, and only the key
// names are kept for listings.
type Record struct {
	Name     string `json:"name"`
	Template string `json:"template"`
	// Task, for an implicit agent (a persistent task without template:),
	// is the task whose own scope (tasks.<name>) every launch, resume,
	// queue_max and env resolve from; Template is then empty.
	Task      string         `json:"task,omitempty"`
	Harness   string         `json:"harness"`
	Workspace string         `json:"workspace"`
	Model     string         `json:"model,omitempty"`
	State     api.AgentState `json:"state"`
	// WakeOnMessage: the idle sweep parked the agent; a message starts it.
	WakeOnMessage bool `json:"wake_on_message,omitempty"`

	// SessionID is the harness's conversation id: chosen by leo for a pinning
	// harness (claude), discovered after the first turn otherwise.
	SessionID string `json:"session_id,omitempty"`
	// SessionUsed: a TUI has been launched on SessionID (pinned-not-yet-
	// started ids are false). Informational; Exists decides resume.
	SessionUsed bool `json:"session_used,omitempty"`

	EnvKeys []string `json:"env_keys,omitempty"`
	// SessionEnvKeys are the variables the launch that created the tmux
	// session put in the session's environment (tmux new-session -e keeps
	// them there); a pane respawned in place inherits them, so a later
	// launch unsets those its own env no longer has.
	SessionEnvKeys []string `json:"session_env_keys,omitempty"`

	PaneID  string `json:"pane_id,omitempty"`
	PanePID int    `json:"pane_pid,omitempty"`

	CreatedAt time.Time  `json:"created_at"`
	StartedAt *time.Time `json:"started_at,omitempty"`
	// Resumed: the current launch continued SessionID.
	Resumed bool `json:"resumed,omitempty"`

	// Restarts counts supervised relaunches after an exit.
	Restarts int `json:"restarts"`
	// Failures is the consecutive-exit count the backoff is computed from.
	Failures int       `json:"failures,omitempty"`
	LastExit *api.Exit `json:"last_exit,omitempty"`
	Error    string    `json:"error,omitempty"`
	// RestartDue is when the restart decided for the last counted exit
	// (or failed start) is due; nil once the launch that carries it out
	// begins, or the agent stops. A daemon restored meanwhile continues it
	// at this time and never decides it again.
	RestartDue *time.Time `json:"restart_due,omitempty"`
	// ExitedPID is the TUI whose exit (or failed start) was counted last,
	// until a TUI launched after it reports ready: a dead pane still
	// showing this pid is that exit, never another one to count.
	ExitedPID int `json:"exited_pid,omitempty"`

	// InFlight is the message being delivered from just before its paste
	// until its outcome is known: a daemon killed in between leaves it
	// here, and the next one finishes it from what the screen shows
	// instead of being blocked by the text in the input line.
	InFlight *InFlight `json:"in_flight,omitempty"`

	// Queue is the messages accepted for the agent and not yet in flight,
	// in delivery order. A message is written here before Enqueue accepts
	// it, moves to InFlight in the same write as its paste is recorded, and
	// leaves once its outcome is known, so a daemon killed at any moment
	// leaves every accepted message either here or in InFlight, never in
	// both and never in neither.
	Queue []Queued `json:"queue,omitempty"`

	// Named are the messages whose sender named them (api.SendRequest.ID)
	// lately accepted, oldest first, with their first answer: a retry of
	// the same id is answered from here, never queued again, across a
	// daemon restart too. Kept api.RememberedIDFor, at most
	// api.RememberedIDs; written in the same save that queues the message.
	Named []Named `json:"named,omitempty"`

	// Earlier are the conversations the agent had before SessionID,
	// newest first (a reset, or a resume the harness refused, starts a
	// new one), at most earlierConversations: `leo agent conversation
	// --conversation ID` reads them.
	Earlier []string `json:"earlier,omitempty"`

	// Worktree is the agent's own git worktree (worktree.go); the agent
	// runs in it instead of its template's workspace.
	Worktree *WorktreeRec `json:"worktree,omitempty"`

	// Limit is the usage limit holding the agent's queue (limit.go), from
	// the harness's word until leo resumes; written before memory holds
	// it, so a daemon restarted meanwhile holds on until the same time.
	Limit *LimitHold `json:"limit,omitempty"`
}

// earlierConversations bounds Record.Earlier.
const earlierConversations = 32

// retireConversation moves the current conversation id to Earlier and
// clears it: the next launch starts a new conversation.
func (r *Record) retireConversation() {
	if r.SessionID != "" {
		r.Earlier = append([]string{r.SessionID}, slices.DeleteFunc(slices.Clone(r.Earlier), func(id string) bool { return id == r.SessionID })...)
		if len(r.Earlier) > earlierConversations {
			r.Earlier = r.Earlier[:earlierConversations]
		}
	}
	r.SessionID = ""
	r.SessionUsed = false
}

// Named is a sender's id for a message it sent, and the first answer.
type Named struct {
	ID string `json:"id"`
	// Digest is a hash of the message's text: the same id with other
	// text is not a retry, and is refused.
	Digest string    `json:"digest"`
	At     time.Time `json:"at"`
	Queued int       `json:"queued"`
	Woke   bool      `json:"woke,omitempty"`
}

// Queued is one accepted message waiting for delivery.
type Queued struct {
	ID   string `json:"id"`
	Text string `json:"text"`
	// At is when the message was accepted.
	At time.Time `json:"at"`
	// Sender is who sent it (api.Sender*).
	Sender string `json:"sender,omitempty"`
}

// InFlight is a message that may sit, pasted but not submitted, in the
// agent's input line.
type InFlight struct {
	ID string `json:"id"`
	// Text is exactly what was pasted (delivery.Normalize of the message).
	Text string `json:"text"`
	// Since is when the paste was about to be made.
	Since time.Time `json:"since"`
	// Sender is who sent it (api.Sender*).
	Sender string `json:"sender,omitempty"`
}

func (r *Record) clone() *Record {
	c := *r
	c.EnvKeys = append([]string(nil), r.EnvKeys...)
	c.Earlier = slices.Clone(r.Earlier)
	c.SessionEnvKeys = append([]string(nil), r.SessionEnvKeys...)
	if r.StartedAt != nil {
		t := *r.StartedAt
		c.StartedAt = &t
	}
	if r.LastExit != nil {
		e := *r.LastExit
		c.LastExit = &e
	}
	if r.RestartDue != nil {
		t := *r.RestartDue
		c.RestartDue = &t
	}
	if r.InFlight != nil {
		f := *r.InFlight
		c.InFlight = &f
	}
	c.Worktree = r.Worktree.clone()
	if r.Limit != nil {
		l := *r.Limit
		c.Limit = &l
	}
	c.Queue = append([]Queued(nil), r.Queue...)
	c.Named = append([]Named(nil), r.Named...)
	return &c
}

// scope is the config scope the agent launches from: "templates.<t>", or
// "tasks.<t>" for an implicit agent of a persistent task.
func (r *Record) scope() string {
	if r.Task != "" {
		return "tasks." + r.Task
	}
	return "templates." + r.Template
}

// withoutQueued is q without the message id (q itself when absent).
func withoutQueued(q []Queued, id string) []Queued {
	for i, x := range q {
		if x.ID == id {
			out := make([]Queued, 0, len(q)-1)
			out = append(out, q[:i]...)
			return append(out, q[i+1:]...)
		}
	}
	return q
}

func hasQueued(q []Queued, id string) bool {
	for _, x := range q {
		if x.ID == id {
			return true
		}
	}
	return false
}

// TmuxSession is the tmux session name of an agent.
func TmuxSession(name string) string { return "leo-" + name }

// CheckName returns an invalid_args error for a bad agent name.
func CheckName(name string) error {
	if !config.ValidName(name) {
		return api.Errorf(api.CodeInvalidArgs, "invalid agent name %q: use 1-63 lowercase letters, digits and '-', starting with a letter or digit", name)
	}
	return nil
}

// baseName turns a template name into an agent name stem: lowercase, every
// other character a '-', trimmed to leave room for a collision suffix.
func baseName(template string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(template) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	s := strings.Trim(b.String(), "-")
	if s == "" {
		s = "agent"
	}
	if len(s) > 56 {
		s = strings.TrimRight(s[:56], "-")
	}
	return s
}

// uniqueName picks base, then base-2, base-3… until taken says no.
func uniqueName(base string, taken func(string) bool) string {
	if !taken(base) {
		return base
	}
	for i := 2; ; i++ {
		suffix := "-" + strconv.Itoa(i)
		stem := base
		if len(stem)+len(suffix) > 63 {
			stem = strings.TrimRight(stem[:63-len(suffix)], "-")
		}
		if n := stem + suffix; !taken(n) {
			return n
		}
	}
}

// storeVersion is the version of state/agents.json this leo writes and
// reads. A newer leo that changes what a record means bumps it.
const storeVersion = 1

// storeFile is the on-disk shape of state/agents.json.
type storeFile struct {
	Version int       `json:"version"`
	Agents  []*Record `json:"agents"`
}

// checkStoreShape accepts only what Save writes: an object with
// "version": 1 and an "agents" array of objects. Anything else (null, an
// array, {}, a newer version) is not ours, and is never taken as an empty
// fleet.
func checkStoreShape(data []byte) error {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil || top == nil {
		return errors.New("not a JSON object")
	}
	rawV, ok := top["version"]
	if !ok {
		return errors.New(`no "version"`)
	}
	var v int
	if err := json.Unmarshal(rawV, &v); err != nil {
		return fmt.Errorf(`"version" is %s, not a number`, rawV)
	}
	if v > storeVersion {
		return fmt.Errorf("version %d is newer than this leo's (%d): written by a newer leo", v, storeVersion)
	}
	if v != storeVersion {
		return fmt.Errorf("unknown version %d (this leo reads %d)", v, storeVersion)
	}
	rawA, ok := top["agents"]
	if !ok {
		return errors.New(`no "agents"`)
	}
	var list []json.RawMessage
	if err := json.Unmarshal(rawA, &list); err != nil || list == nil {
		return fmt.Errorf(`"agents" is %.40s, not an array`, rawA)
	}
	for i, r := range list {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(r, &obj); err != nil || obj == nil {
			return fmt.Errorf(`"agents"[%d] is %.40s, not an object`, i, r)
		}
	}
	return nil
}

// Skipped is a record Load did not take: leo does not act on it (its tmux
// session, if any, is left alone) and the file as it was is kept aside.
type Skipped struct {
	Name  string
	State api.AgentState
	Why   string
}

// Store persists records atomically (0600). Saves are serialized so an older
// snapshot never overwrites a newer one. How a save of one record avoids
// re-encoding the others is in store_write.go.
type Store struct {
	path string
	// guard, when set, must pass before each write (see Options.SaveGuard).
	guard func() error
	// all, when set, is every record memory holds (as SaveThen's snap): a
	// save of one record writes the others from it while kept is not known
	// to match the file.
	all func() []*Record
	// mu is held by the one writer at a time, from its snapshots to its
	// done callbacks; kept and known belong to it.
	mu sync.Mutex
	// kept is each record's JSON exactly as the file on disk holds it, in
	// the file's order (by name); known says it matches the file (false
	// before the first write and after a save that did not land).
	kept  []keptRecord
	known bool
	// buf is the last write's bytes, reused for the next one.
	buf []byte
	// queue is the single-record saves waiting for a writer, in arrival
	// order (guarded by qmu, never held while writing).
	qmu   sync.Mutex
	queue []*recordSave
}

// NewStore keeps records at path.
func NewStore(path string) *Store { return &Store{path: path} }

// Load reads every record. A missing file is an empty store. A file that
// does not parse, or is not of the shape and version this leo writes, is
// moved aside by statefile and reported as *statefile.CorruptError along
// with an empty list, so the daemon can log it and carry on without
// overwriting what a person may want to recover. A record leo cannot act on
// (unknown state, bad or repeated name) is left out and returned in
// skipped, and the whole file is first copied to aside.
func (s *Store) Load() (recs []*Record, skipped []Skipped, aside string, err error) {
	// Boot restore is the only caller and the daemon holds the home's lock,
	// so a temp file beside agents.json is from a write a crash cut short.
	_, _ = statefile.RemoveTemps(s.path)
	var f storeFile
	if _, err := statefile.ReadChecked(s.path, &f, checkStoreShape); err != nil {
		return nil, nil, "", err
	}
	recs, skipped = actionable(f.Agents)
	if len(skipped) > 0 {
		// The next save drops what was skipped: keep the file as it was.
		a, cerr := statefile.CopyAside(s.path, "unknown")
		if cerr != nil {
			return nil, nil, "", fmt.Errorf("%s holds records this leo does not understand, and could not be kept aside: %w", s.path, cerr)
		}
		aside = a
	}
	return recs, skipped, aside, nil
}

// actionable splits a file's records into those leo can act on and those
// it cannot (unknown state, bad or repeated name).
func actionable(all []*Record) (recs []*Record, skipped []Skipped) {
	recs = make([]*Record, 0, len(all))
	seen := map[string]bool{}
	for i, r := range all {
		why := ""
		switch {
		case r == nil:
			why = fmt.Sprintf("agents[%d] is null", i)
		case !config.ValidName(r.Name):
			why = fmt.Sprintf("agents[%d]: invalid name %q", i, r.Name)
		case seen[r.Name]:
			why = fmt.Sprintf("agents[%d]: a second record named %q", i, r.Name)
		case r.State != api.StateStarting && r.State != api.StateRunning && r.State != api.StateStopped:
			why = fmt.Sprintf("agents[%d]: unknown state %q", i, r.State)
		}
		if why != "" {
			sk := Skipped{Why: why}
			if r != nil {
				sk.Name, sk.State = r.Name, r.State
			}
			skipped = append(skipped, sk)
			if r != nil && config.ValidName(r.Name) {
				seen[r.Name] = true
			}
			continue
		}
		seen[r.Name] = true
		recs = append(recs, r)
	}
	return recs, skipped
}

// ReadListing is the agents of the store file at path as listings show
// them, for a leo with no daemon running: read only — a missing file is no
// agents, and a file leo does not understand is reported, never moved
// aside (the daemon does that when it starts). The states are as the last
// daemon saved them, not live. Records leo cannot act on are left out and
// named in skipped.
func ReadListing(path string) (agents []api.Agent, skipped []Skipped, err error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return []api.Agent{}, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	var f storeFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, nil, fmt.Errorf("%s cannot be read: %w", path, err)
	}
	if err := checkStoreShape(data); err != nil {
		return nil, nil, fmt.Errorf("%s is not what this leo writes: %w", path, err)
	}
	recs, skipped := actionable(f.Agents)
	agents = make([]api.Agent, 0, len(recs))
	for _, r := range recs {
		a := r.listing()
		a.Queued = len(r.Queue)
		if r.InFlight != nil {
			a.Queued++
		}
		agents = append(agents, a)
	}
	sort.Slice(agents, func(i, j int) bool { return agents[i].Name < agents[j].Name })
	return agents, skipped, nil
}

// listing is r as listings show it, without what only a running daemon
// knows (its queue's count, the latest deliveries).
func (r *Record) listing() api.Agent {
	out := api.Agent{
		Name:          r.Name,
		Template:      r.Template,
		Task:          r.Task,
		Harness:       r.Harness,
		Model:         r.Model,
		Workspace:     r.Workspace,
		State:         r.State,
		WakeOnMessage: r.WakeOnMessage,
		SessionID:     r.SessionID,
		TmuxSession:   TmuxSession(r.Name),
		EnvKeys:       append([]string(nil), r.EnvKeys...),
		Restarts:      r.Restarts,
		CreatedAt:     r.CreatedAt,
		LastError:     r.Error,
		Worktree:      r.Worktree.listing(),
	}
	if r.StartedAt != nil {
		t := *r.StartedAt
		out.StartedAt = &t
	}
	if r.LastExit != nil {
		e := *r.LastExit
		out.LastExit = &e
	}
	return out
}

// IsCorrupt reports whether err is a corrupt-state-file report.
func IsCorrupt(err error) bool {
	var c *statefile.CorruptError
	return errors.As(err, &c)
}
