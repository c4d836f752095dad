package cli

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/blackpaw-studio/leo/internal/client"
)

// `leo agent list --json` prints the daemon's list without decoding it; its
// bytes must be exactly what encoding the decoded list as agentListJSON
// gives (field names, order, layout, no HTML escaping), empty or not.
func TestAgentListJSONIsTheDecodedListReencoded(t *testing.T) {
	e, h := daemonEnv(t)
	startFakeDaemon(t, e, h)
	c := client.New(h)
	defer c.Close()
	for i := 0; i <= 3; i++ {
		if i > 0 {
			// The fake manager takes any template: one with characters
			// an HTML-escaping encoder would change.
			if r := e.run("agent", "spawn", "assistant-<&>", "--name", fmt.Sprintf("a%d", i)); r.code != ExitOK {
				t.Fatalf("spawn: %+v", r)
			}
		}
		r := e.run("agent", "list", "--json")
		if r.code != ExitOK {
			t.Fatalf("list: %+v", r)
		}
		agents, err := c.List(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if agents == nil {
			t.Fatalf("the daemon answered null for an empty fleet")
		}
		var want bytes.Buffer
		if err := writeJSON(&want, agentListJSON{Agents: agents, Live: true}); err != nil {
			t.Fatal(err)
		}
		if r.stdout != want.String() {
			t.Fatalf("with %d agents, list --json printed\n%s\nwant\n%s", len(agents), r.stdout, want.String())
		}
	}
}
