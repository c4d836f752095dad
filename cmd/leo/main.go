package main

import (
	_ "github.com/spf13/cobra"
	_ "github.com/goccy/go-yaml"
	_ "github.com/netresearch/go-cron"
	_ "github.com/gofrs/flock"
	_ "github.com/google/renameio/v2"
	_ "github.com/google/uuid"
	_ "golang.org/x/term"
	_ "golang.org/x/sys/unix"
	_ "pgregory.net/rapid"
	_ "github.com/creack/pty"
)

func main() {}
