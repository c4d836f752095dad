package harness

import (
	"reflect"
	"testing"
)

func TestServerEnv(t *testing.T) {
	b := &MCPBridge{Env: map[string]string{"LEO_HOME": "/h"}, URL: "http://127.0.0.1:8370"}
	got := b.ServerEnv()
	if want := map[string]string{"LEO_HOME": "/h", "LEO_URL": "http://127.0.0.1:8370"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("ServerEnv() = %v, want %v", got, want)
	}
	if _, added := b.Env["LEO_URL"]; added {
		t.Fatal("ServerEnv wrote into the bridge's Env")
	}
	own := &MCPBridge{Env: map[string]string{"LEO_URL": "http://other"}, URL: "http://127.0.0.1:8370"}
	if got := own.ServerEnv()["LEO_URL"]; got != "http://other" {
		t.Fatalf("a LEO_URL the bridge env sets was replaced by %q", got)
	}
	if got := (&MCPBridge{}).ServerEnv(); got == nil || len(got) != 0 {
		t.Fatalf("ServerEnv of an empty bridge = %#v, want an empty map", got)
	}
}

func TestGetenv(t *testing.T) {
	t.Setenv("LEO_TEST_GETENV", "process")
	if got := Getenv(nil, "LEO_TEST_GETENV"); got != "process" {
		t.Errorf("Getenv without env = %q", got)
	}
	if got := Getenv(map[string]string{"LEO_TEST_GETENV": "launch"}, "LEO_TEST_GETENV"); got != "launch" {
		t.Errorf("Getenv = %q, want the launch env's value", got)
	}
	if got := Getenv(map[string]string{"LEO_TEST_GETENV": ""}, "LEO_TEST_GETENV"); got != "" {
		t.Errorf("Getenv = %q: a key set to \"\" in env must stay empty", got)
	}
}

func TestKindKnown(t *testing.T) {
	for _, k := range []Kind{KindTask, KindAgent, KindPersistent} {
		if !k.Known() {
			t.Errorf("%s.Known() = false", k)
		}
	}
	if Kind("cron").Known() || Kind("").Known() {
		t.Error("an unknown kind is known")
	}
}

func TestBridgeForNamesOneSenderAndCopies(t *testing.T) {
	var none *MCPBridge
	if none.For(BridgeAgentEnv, "a") != nil {
		t.Fatal("a nil bridge (none wired) must stay nil")
	}
	b := &MCPBridge{Command: "/leo", Env: map[string]string{"LEO_HOME": "/h"}, URL: "http://127.0.0.1:8370"}
	a := b.For(BridgeAgentEnv, "alice")
	if a.Env["LEO_AGENT"] != "alice" || a.Env["LEO_HOME"] != "/h" || len(b.Env) != 1 {
		t.Fatalf("agent bridge env %v (shared %v)", a.Env, b.Env)
	}
	task := a.For(BridgeTaskEnv, "nightly")
	if env := task.ServerEnv(); env["LEO_TASK"] != "nightly" || env["LEO_AGENT"] != "" || env["LEO_URL"] != "http://127.0.0.1:8370" {
		t.Fatalf("task bridge server env %v: want LEO_TASK only, LEO_URL kept", env)
	}
	if v, set := task.Env["LEO_AGENT"]; !set || v != "" {
		t.Fatal("a task's bridge must set LEO_AGENT empty, so an inherited one cannot name a second sender")
	}
}
