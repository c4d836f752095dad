package bench

import (
	"testing"

	"github.com/blackpaw-studio/leo/internal/config"
)

// BenchmarkValidateInProcess is the config half of BenchmarkValidateProcess
// without process start-up: Load and Findings on the same generated config.
// Profile it to find where `leo validate` spends its time:
//
//	go test -run '^$' -bench ValidateInProcess -cpuprofile cpu.out ./bench/
func BenchmarkValidateInProcess(b *testing.B) {
	path, err := GenerateConfig(b.TempDir(), 1000, 1000)
	if err != nil {
		b.Fatal(err)
	}
	getenv := func(string) string { return "" }
	for b.Loop() {
		cfg, err := config.Load(path, config.WithGetenv(getenv))
		if err != nil {
			b.Fatal(err)
		}
		for _, f := range cfg.Findings() {
			if f.IsError() {
				b.Fatalf("generated config has an error: %s", f.Message)
			}
		}
	}
}
