// Command leo is the leo CLI and daemon. main only runs the command tree and
// turns its error into the exit status (the mapping lives in internal/cli).
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/blackpaw-studio/leo/internal/cli"
	_ "github.com/blackpaw-studio/leo/internal/harness/all" // every adapter leo ships
)

// version is set at build time: go build -ldflags "-X main.version=v1.2.3".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	f := cli.NewFactory(cli.System(), os.Getenv, version)
	err := cli.Run(ctx, os.Args[1:], f)
	stop()
	os.Exit(int(cli.ExitCodeOf(err)))
}
