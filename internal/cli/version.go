package cli

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"
)

func init() { register(newVersionCmd) }

// VersionOptions are the inputs of `leo version`.
type VersionOptions struct {
	IO      *IOStreams
	Version string
	JSON    bool
}

// versionInfo is the JSON of `leo version --json`. Field names are an API.
type versionInfo struct {
	Version string `json:"version"`
	Go      string `json:"go"`
	OS      string `json:"os"`
	Arch    string `json:"arch"`
}

func newVersionCmd(f *Factory) *cobra.Command {
	opts := &VersionOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print leo's version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			opts.Version = f.Version
			return runVersion(opts)
		},
	}
	addJSONFlag(cmd, &opts.JSON)
	return cmd
}

func runVersion(opts *VersionOptions) error {
	info := versionInfo{Version: opts.Version, Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	if opts.JSON {
		return writeJSON(opts.IO.Out, info)
	}
	_, err := fmt.Fprintf(opts.IO.Out, "leo %s (%s %s/%s)\n", info.Version, info.Go, info.OS, info.Arch)
	return err
}
