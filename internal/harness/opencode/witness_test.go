package opencode

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// The store under testdata/store is real: opencode.db and opencode.db-wal
// as opencode 1.18.33 left them after eight turns in /tmp/hoc/w1 (the later
// turns only in the WAL; one a 3-line paste, one 4,000 characters, which
// SQLite keeps on overflow pages), and the same database checkpointed into
// one file. user-turns.want.json is what sqlite3 itself read from it.
const storeWorkspace = "/tmp/hoc/w1"

type wantTurn struct {
	Session string `json:"session"`
	At      int64  `json:"at"`
	Text    string `json:"text"`
}

func wantTurns(t *testing.T) []harness.UserTurn {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "store", "user-turns.want.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ws []wantTurn
	if err := json.Unmarshal(data, &ws); err != nil {
		t.Fatal(err)
	}
	out := make([]harness.UserTurn, len(ws))
	for i, w := range ws {
		out[i] = harness.UserTurn{SessionID: w.Session, Text: w.Text, At: time.UnixMilli(w.At)}
	}
	return out
}

// liveStore unpacks the db and WAL into a fresh XDG data dir and returns
// the env that finds them.
func liveStore(t *testing.T) (map[string]string, string) {
	t.Helper()
	data := t.TempDir()
	dir := filepath.Join(data, "opencode")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join("testdata", "store", "live-db-wal_v1.18.33.tgz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(h.Name)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return map[string]string{"XDG_DATA_HOME": data, "HOME": t.TempDir()}, filepath.Join(dir, "opencode.db")
}

func checkpointedStore(t *testing.T) map[string]string {
	t.Helper()
	return gzStore(t, "checkpointed_v1.18.33.db.gz")
}

// gzStore installs testdata/store/<file>, a gzipped opencode.db, as the
// store of a fresh HOME and returns the env that points at it.
func gzStore(t *testing.T, file string) map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "store", file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(gz)
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	dir := filepath.Join(home, ".local", "share", "opencode")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "opencode.db"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return map[string]string{"HOME": home}
}

func TestUserTurnsFromTheRealStore(t *testing.T) {
	want := wantTurns(t)
	if len(want) != 8 {
		t.Fatalf("want file has %d turns", len(want))
	}
	live, _ := liveStore(t)
	for name, env := range map[string]map[string]string{"db+wal": live, "checkpointed": checkpointedStore(t)} {
		t.Run(name, func(t *testing.T) {
			q := harness.SessionQuery{Workspace: storeWorkspace, Env: env}
			got, err := Opencode{}.UserTurns(context.Background(), q, "")
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("got %d turns %+v\nwant %d %+v", len(got), got, len(want), want)
			}
			// By id, since a time: the last two (the 3-line paste and the
			// 4,000 characters from overflow pages).
			q.Since = want[6].At
			got, err = Opencode{}.UserTurns(context.Background(), q, want[0].SessionID)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want[6:]) {
				t.Fatalf("since %v: got %+v", q.Since, got)
			}
			if len(got[1].Text) < 4000 {
				t.Fatalf("long text read as %d bytes", len(got[1].Text))
			}
			for _, c := range []struct {
				name string
				q    harness.SessionQuery
				id   string
			}{
				{"excluded", harness.SessionQuery{Workspace: storeWorkspace, Env: env, Exclude: []string{want[0].SessionID}}, ""},
				{"other workspace", harness.SessionQuery{Workspace: "/tmp/hoc/w2", Env: env}, ""},
				{"unknown id", harness.SessionQuery{Workspace: storeWorkspace, Env: env}, "ses_nope"},
				{"later", harness.SessionQuery{Workspace: storeWorkspace, Env: env, Since: want[7].At.Add(time.Millisecond)}, ""},
			} {
				got, err := Opencode{}.UserTurns(context.Background(), c.q, c.id)
				if err != nil || len(got) != 0 {
					t.Errorf("%s: got %+v, %v; want none", c.name, got, err)
				}
			}
		})
	}
}

// Only the WAL's committed, checksummed frames count: a WAL cut short
// mid-frame, or with a frame damaged, gives the turns of the commits before
// the damage, never an error or a made-up turn.
func TestUserTurnsDamagedWAL(t *testing.T) {
	want := wantTurns(t)
	env, db := liveStore(t)
	wal, err := os.ReadFile(db + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	q := harness.SessionQuery{Workspace: storeWorkspace, Env: env}
	for _, cut := range []int{len(wal) - 100, len(wal) / 2, 40, 10} {
		if err := os.WriteFile(db+"-wal", wal[:cut], 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := Opencode{}.UserTurns(context.Background(), q, "")
		if err != nil {
			t.Fatalf("WAL cut at %d: %v", cut, err)
		}
		if len(got) > len(want) || !reflect.DeepEqual(got, want[:len(got)]) {
			t.Fatalf("WAL cut at %d: got %+v", cut, got)
		}
	}
	damaged := append([]byte(nil), wal...)
	damaged[len(damaged)/2] ^= 0xff
	if err := os.WriteFile(db+"-wal", damaged, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Opencode{}.UserTurns(context.Background(), q, "")
	if err != nil || len(got) > len(want) || !reflect.DeepEqual(got, want[:len(got)]) {
		t.Fatalf("damaged WAL: got %+v, %v", got, err)
	}
}

func TestUserTurnsNoStoreAndBadStore(t *testing.T) {
	home := t.TempDir()
	q := harness.SessionQuery{Workspace: storeWorkspace, Env: map[string]string{"HOME": home}}
	if got, err := (Opencode{}).UserTurns(context.Background(), q, ""); err != nil || got != nil {
		t.Fatalf("no store: %+v, %v", got, err)
	}
	db := filepath.Join(home, "bad.db")
	if err := os.WriteFile(db, []byte("not a database at all, not even close to one; more bytes to pass a hundred......................."), 0o644); err != nil {
		t.Fatal(err)
	}
	q.Env = map[string]string{"HOME": home, DBEnv: db}
	if _, err := (Opencode{}).UserTurns(context.Background(), q, ""); err == nil {
		t.Fatal("a file that is not SQLite read without error")
	}
}

// The workspace matches by its real path too: opencode stores the
// directory the OS reports, symlinks resolved.
func TestWorkspaceDirsResolvesSymlinks(t *testing.T) {
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	realResolved, _ := filepath.EvalSymlinks(real)
	got := workspaceDirs(link)
	if len(got) != 2 || got[0] != link || got[1] != realResolved {
		t.Fatalf("workspaceDirs(%s) = %v", link, got)
	}
}

// Arbitrary bytes as a database (and as its WAL) never panic or hang.
func FuzzSQLiteFile(f *testing.F) {
	seed, err := os.ReadFile(filepath.Join("testdata", "store", "checkpointed_v1.18.33.db.gz"))
	if err != nil {
		f.Fatal(err)
	}
	gz, err := gzip.NewReader(bytes.NewReader(seed))
	if err != nil {
		f.Fatal(err)
	}
	db, err := io.ReadAll(gz)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(db[:8192])
	f.Add(db)
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "opencode.db")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, _ = readUserTurns(path, harness.SessionQuery{Workspace: storeWorkspace}, "")
	})
}
