package proc

import (
	"os"
	"os/exec"
	"runtime"
	"testing"
)

func TestStartIdentifiesALiveProcessOnly(t *testing.T) {
	if runtime.GOOS != "linux" {
		if Start(os.Getpid()) != "" {
			t.Fatal("a start time without /proc")
		}
		return
	}
	self := Start(os.Getpid())
	if self == "" || Start(os.Getpid()) != self {
		t.Fatalf("own start time %q is not stable", self)
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if got := Start(cmd.Process.Pid); got != "" {
		t.Fatalf("an ended (reaped) process has start %q", got)
	}
	if Start(0) != "" || Start(-1) != "" {
		t.Fatal("a start time for no pid")
	}
}
