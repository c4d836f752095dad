package config

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/home"
)

func TestMCPBridge(t *testing.T) {
	root := t.TempDir()
	web := parseTestYAML(t, "web: {enabled: true, bind: 0.0.0.0, port: 9000}\n")
	off := parseTestYAML(t, "web: {enabled: false}\n")
	managed := home.Home{Root: root, ConfigPath: filepath.Join(root, "leo.yaml")}
	explicit := home.Home{Root: root, ConfigPath: filepath.Join(root, "custom.yaml"), ExplicitConfig: true}
	const leo = "/opt/leo/bin/leo"

	if err := os.MkdirAll(filepath.Dir(managed.TokenPath()), 0o700); err != nil {
		t.Fatal(err)
	}
	// No usable token: no bridge.
	if b := web.MCPBridge(managed, leo); b != nil {
		t.Fatalf("bridge without a token file: %+v", b)
	}
	if err := os.WriteFile(managed.TokenPath(), []byte(" \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b := web.MCPBridge(managed, leo); b != nil {
		t.Fatalf("bridge with a blank token: %+v", b)
	}
	if err := os.WriteFile(managed.TokenPath(), []byte("tok\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b := off.MCPBridge(managed, leo); b != nil {
		t.Fatalf("bridge with the web API off: %+v", b)
	}
	if b := web.MCPBridge(managed, ""); b != nil {
		t.Fatalf("bridge without a leo binary: %+v", b)
	}

	for name, tc := range map[string]struct {
		h    home.Home
		args []string
	}{
		"the home's own leo.yaml": {managed, []string{"mcp-server"}},
		// The server must read the file the daemon was started with, not
		// <home>/leo.yaml.
		"--config <file>": {explicit, []string{"--config", explicit.ConfigPath, "mcp-server"}},
	} {
		b := web.MCPBridge(tc.h, leo)
		want := &harness.MCPBridge{Command: leo, Args: tc.args,
			Env: map[string]string{"LEO_HOME": root}, URL: "http://127.0.0.1:9000"}
		if !reflect.DeepEqual(b, want) {
			t.Errorf("%s: bridge %+v, want %+v", name, b, want)
		}
	}
}
