package bench

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/e2e/leoproc"
	"github.com/blackpaw-studio/leo/internal/testutil/hermetic"
)

var (
	buildOnce sync.Once
	leoBin    string
	buildErr  error
	buildDir  string
)

func TestMain(m *testing.M) {
	code := hermetic.Main(m)
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	leoproc.Cleanup()
	os.Exit(code)
}

// leoBinary builds cmd/leo once per test binary, the way a user installs it
// (no race detector, default flags), and returns its path.
func leoBinary(tb testing.TB) string {
	tb.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "leo-bench-")
		if buildErr != nil {
			return
		}
		leoBin = filepath.Join(buildDir, "leo")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, goTool(), "build", "-o", leoBin, "github.com/blackpaw-studio/leo/cmd/leo")
		cmd.Stdin = nil
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			buildErr = &buildFailure{err: err, output: out.String()}
		}
	})
	if buildErr != nil {
		tb.Fatalf("building leo: %v", buildErr)
	}
	return leoBin
}

type buildFailure struct {
	err    error
	output string
}

func (b *buildFailure) Error() string { return b.err.Error() + "\n" + b.output }

// goTool is the go command of the toolchain running the tests: `go test`
// puts its GOROOT/bin first on the test binary's PATH.
func goTool() string { return "go" }

// runLeo runs the leo binary once with a clean environment (HOME=home, no
// LEO_HOME leaking in) and returns its stdout, stderr and exit code.
func runLeo(tb testing.TB, bin, home string, args ...string) (string, string, int) {
	tb.Helper()
	stdout, stderr, code, _ := runLeoCPU(tb, bin, home, args...)
	return stdout, stderr, code
}

// runLeoCPU is runLeo that also returns the CPU time (user + system) the
// process used: unlike wall time, it barely moves when other work shares
// the machine.
func runLeoCPU(tb testing.TB, bin, home string, args ...string) (string, string, int, time.Duration) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = []string{"HOME=" + home, "PATH=" + hermetic.Dir(tb), "BENCH_TOKEN=bench-secret-value"}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			tb.Fatalf("running leo %v: %v", args, err)
		}
		code = ee.ExitCode()
	}
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return stdout.String(), stderr.String(), code, cpu
}

// TestGeneratedConfigIsValid makes sure the benchmark measures a clean
// validation of the whole config, not an early failure.
func TestGeneratedConfigIsValid(t *testing.T) {
	bin := leoBinary(t)
	cfg, err := GenerateConfig(t.TempDir(), 1000, 1000)
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runLeo(t, bin, t.TempDir(), "validate", "-c", cfg, "--json")
	if code != 0 {
		t.Fatalf("leo validate exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if !bytes.Contains([]byte(stdout), []byte(`"ok":true`)) {
		t.Fatalf("leo validate --json did not report ok:\n%s", stdout)
	}
}

// BenchmarkValidateProcess runs `leo validate` as a whole process on two
// generated configs spread over the harnesses: a typical one (20
// templates and 20 tasks) and a large one (1,000 of each). Each reports
// ms/op and, measured in the same run, the floor: `leo version`, a process
// that starts and exits without reading any config. cpu-ms/op and
// floor-cpu-ms/op are the CPU time (user + system, all threads) per run,
// the figures to trust when the machine is busy.
func BenchmarkValidateProcess(b *testing.B) {
	for _, size := range []struct {
		name string
		n    int
	}{{"typical-20x20", 20}, {"large-1000x1000", 1000}} {
		b.Run(size.name, func(b *testing.B) { benchValidate(b, size.n) })
	}
}

func benchValidate(b *testing.B, n int) {
	bin := leoBinary(b)
	cfg, err := GenerateConfig(b.TempDir(), n, n)
	if err != nil {
		b.Fatal(err)
	}
	home := b.TempDir()
	if stdout, stderr, code := runLeo(b, bin, home, "validate", "-c", cfg); code != 0 {
		b.Fatalf("leo validate exit %d\n%s%s", code, stdout, stderr)
	}

	var floorCPU time.Duration
	floor := measure(b, 20, func() {
		_, _, _, used := runLeoCPU(b, bin, home, "version")
		floorCPU += used
	})

	b.ResetTimer()
	start := time.Now()
	runs := 0
	var cpu time.Duration
	for b.Loop() {
		_, stderr, code, used := runLeoCPU(b, bin, home, "validate", "-c", cfg)
		if code != 0 {
			b.Fatalf("leo validate exit %d: %s", code, stderr)
		}
		cpu += used
		runs++
	}
	perOp := float64(time.Since(start).Microseconds()) / 1000 / float64(runs)
	b.ReportMetric(perOp, "ms/op")
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(runs), "cpu-ms/op")
	b.ReportMetric(floor, "floor-ms/op")
	b.ReportMetric(float64(floorCPU.Microseconds())/1000/20, "floor-cpu-ms/op")
	b.ReportMetric(perOp/floor, "x-floor")
}

// measure returns the mean wall time of fn over n runs, in milliseconds.
func measure(b *testing.B, n int, fn func()) float64 {
	b.Helper()
	start := time.Now()
	for range n {
		fn()
	}
	return float64(time.Since(start).Microseconds()) / 1000 / float64(n)
}
