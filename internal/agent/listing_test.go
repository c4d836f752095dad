package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/api"
)

// Issue 15.6: with no daemon, `leo agent list` reads state/agents.json as
// the last daemon saved it, and never writes: a missing file is no agents,
// a record leo cannot act on is named, a file leo does not understand is
// reported and left where it is (only a daemon keeps it aside).
func TestReadListingReadsOnly(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "agents.json")
	if as, sk, err := ReadListing(path); err != nil || len(as) != 0 || as == nil || sk != nil {
		t.Fatalf("missing file: %v %v %v", as, sk, err)
	}
	if err := NewStore(path).Save(func() []*Record {
		return []*Record{
			{Name: "bob", Template: "assistant", Harness: "claude", State: api.StateRunning, EnvKeys: []string{"K"},
				Queue: []Queued{{ID: "m1", Text: "hi"}}, InFlight: &InFlight{ID: "m0", Text: "yo"}},
			{Name: "amy", Template: "assistant", Harness: "codex", State: api.StateStopped, Error: "claude CLI not found"},
			{Name: "zed", Harness: "codex", State: "dreaming"},
		}
	}); err != nil {
		t.Fatal(err)
	}
	entries := func() string {
		es, _ := os.ReadDir(dir)
		var names []string
		for _, e := range es {
			names = append(names, e.Name())
		}
		return strings.Join(names, ",")
	}
	before, _ := os.ReadFile(path)
	as, sk, err := ReadListing(path)
	if err != nil || len(as) != 2 || as[0].Name != "amy" || as[1].Name != "bob" {
		t.Fatalf("listing %+v %v", as, err)
	}
	if b := as[1]; b.State != api.StateRunning || b.Queued != 2 || b.TmuxSession != "leo-bob" || b.EnvKeys[0] != "K" || as[0].LastError == "" {
		t.Fatalf("bob %+v, amy %+v", b, as[0])
	}
	if len(sk) != 1 || sk[0].Name != "zed" {
		t.Fatalf("skipped %+v", sk)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) || entries() != "agents.json" {
		t.Fatalf("reading wrote: %s", entries())
	}
	for _, bad := range []string{"{not json", `{"version": 9, "agents": []}`} {
		if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, _, err := ReadListing(path); err == nil || !strings.Contains(err.Error(), path) {
			t.Fatalf("%q: %v", bad, err)
		}
		if entries() != "agents.json" {
			t.Fatalf("%q: a file leo does not understand was moved: %s", bad, entries())
		}
	}
}
