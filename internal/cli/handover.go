package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/client"
	"github.com/blackpaw-studio/leo/internal/handover"
)

// ServiceHandoverOptions are the inputs of `leo service handover`.
type ServiceHandoverOptions struct {
	IO   *IOStreams
	JSON bool
	handover.Request
}

func newServiceHandoverCmd(f *Factory) *cobra.Command {
	opts := &ServiceHandoverOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "handover --to-app --label <label> | --to-cli [--label <label>]",
		Short: "Move the daemon between the CLI's LaunchAgent and Leo.app's (called by the app)",
		Long: `Move this home's daemon between the CLI install's LaunchAgent
(com.blackpaw.leo) and Leo.app's managed one, macOS only. Leo.app calls it;
it is not meant for hand use. Busy agents are drained first; the tmux server
and the agents stay up and the next daemon adopts them.

--to-app --label L: no marker may exist; the CLI job is drained and booted
out, its plist moved to <plist>.handed-over, and leo waits until
state/daemon.lock is free. The result carries the plist's
EnvironmentVariables as "env" for the app's job.

--to-cli: the managed daemon is drained, the marker's job booted out,
managed.json moved to managed.json.releasing, the CLI plist restored and
bootstrapped; once the CLI daemon is ready managed.json.releasing is deleted.
With no marker (recovery after an app that never wrote one) --label names the
app's job, which must not be registered.

--dry-run runs every check and prints the plan without changing anything.
--json prints {"ok":true,"previous_label":…,"plist_backup":…,…} or
{"ok":false,"step":…,"error":…,"message":…} (see docs/service.md).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServiceHandover(cmd.Context(), f, opts)
		},
		Annotations: map[string]string{failureShapeAnnotation: failureShapeHandover},
	}
	addJSONFlag(cmd, &opts.JSON)
	cmd.Flags().BoolVar(&opts.ToApp, "to-app", false, "hand the daemon to Leo.app's LaunchAgent")
	cmd.Flags().BoolVar(&opts.ToCLI, "to-cli", false, "take the daemon back from Leo.app to the CLI's LaunchAgent")
	cmd.Flags().StringVar(&opts.Label, "label", "", "the app's launchd label (--to-app; --to-cli without a marker)")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "check everything and print the plan; change nothing")
	return cmd
}

func runServiceHandover(ctx context.Context, f *Factory, opts *ServiceHandoverOptions) error {
	h, err := f.Home()
	if err != nil {
		return &handover.Failure{Step: handover.StepPreflight, Code: api.CodeConfigError, Message: err.Error()}
	}
	userHome := f.Getenv("HOME")
	if userHome == "" {
		userHome, _ = os.UserHomeDir()
	}
	c := client.New(h)
	defer c.Close()
	ho := handover.Options{
		Home:     h,
		GOOS:     f.GOOS,
		Getenv:   f.Getenv,
		UserHome: userHome,
		UID:      os.Getuid(),
		Daemon:   c,
		LoadConfig: func() error {
			_, _, err := f.LoadConfig()
			return err
		},
		Version: f.Version,
		Log:     opts.IO.ErrOut,
	}
	if f.HandoverOptions != nil {
		f.HandoverOptions(&ho)
	}
	res, err := handover.Run(ctx, ho, opts.Request)
	if err != nil {
		return err
	}
	if opts.JSON {
		return writeJSON(opts.IO.Out, res)
	}
	printHandover(opts, res)
	return nil
}

// failureShapeAnnotation marks a command whose JSON failures have a shape of
// their own, cobra's command-line mistakes included.
const (
	failureShapeAnnotation = "leo/failure-shape"
	failureShapeHandover   = "handover"
)

// inCommandShape gives a failure of cmd its command's shape: every handover
// failure, a bad flag too, is {"ok":false,"step",…} (docs/managed-install.md
// lists invalid_args among the handover's codes), so the app reads one shape.
func inCommandShape(cmd *cobra.Command, err error) error {
	if cmd == nil || cmd.Annotations[failureShapeAnnotation] != failureShapeHandover {
		return err
	}
	var hf *handover.Failure
	if errors.As(err, &hf) {
		return err
	}
	return &handover.Failure{Step: handover.StepPreflight, Code: codeOf(err), Message: err.Error()}
}

// printHandover is the text form. It names env keys only: values may be
// secrets.
func printHandover(opts *ServiceHandoverOptions, res handover.Result) {
	out := opts.IO.Out
	if res.DryRun {
		fmt.Fprintln(out, "dry run: nothing changed; the handover would:")
		for i, s := range res.Plan {
			fmt.Fprintf(out, "  %d. [%s] %s\n", i+1, s.Step, s.Action)
		}
	} else if opts.ToApp {
		fmt.Fprintf(out, "handed over: %s stopped; its plist is at %s\n", res.PreviousLabel, res.PlistBackup)
	} else {
		fmt.Fprintf(out, "released: %s stopped (%v); the CLI daemon runs from the restored plist\n", res.PreviousLabel, res.ManagedStopped != nil && *res.ManagedStopped)
	}
	if env, ok := res.Env.(map[string]string); ok && len(env) > 0 {
		var ks []string
		for k := range env {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		fmt.Fprintf(out, "env for the app's job: %s\n", strings.Join(ks, ", "))
	}
	if res.Warning != "" {
		fmt.Fprintf(out, "warning: %s\n", res.Warning)
	}
}
