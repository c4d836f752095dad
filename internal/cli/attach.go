package cli

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/blackpaw-studio/leo/internal/agent"
	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/client"
	"github.com/blackpaw-studio/leo/internal/home"
	"github.com/blackpaw-studio/leo/internal/tmux"
)

func init() { register(newAttachCmd) }

// AttachOptions are the inputs of `leo attach` and `leo agent attach`.
type AttachOptions struct {
	IO     *IOStreams
	Client *client.Client
	// Name is the agent; "" picks the only agent, or asks.
	Name string
	// Tmux is the tmux executable; Socket this home's -L name.
	Tmux   string
	Socket string
	// CanPrompt: a terminal, so a list can be offered to choose from.
	CanPrompt bool
	// Terminal: stdin is a terminal, which tmux attach needs.
	Terminal bool
	// Exec replaces the process with tmux (syscall.Exec); tests capture it.
	Exec func(path string, argv, env []string) error
	// Environ is the environment tmux gets; nil means os.Environ().
	Environ []string
}

func newAttachCmd(f *Factory) *cobra.Command {
	cmd := attachCommand(f, "attach [name]", cobra.MaximumNArgs(1))
	cmd.Long = `Attach this terminal to an agent's tmux session (leo-<name>, on leo's own
tmux server). Detach with the tmux prefix then d (C-b d); the agent keeps
running. With no name: the only agent, or a list to choose from.`
	return cmd
}

// attachHelp adds to the help the plain tmux command attach runs for this
// home, for a terminal leo does not run in (another ssh session, a script
// that opens one).
func attachHelp(f *Factory, cmd *cobra.Command) string {
	long := cmd.Long
	h, err := f.Home()
	if err != nil {
		return long
	}
	bin := "tmux"
	if tm, err := f.Tmux(cmd.Context(), h); err == nil && tm.Binary != "" {
		bin = tm.Binary
	}
	argv, _, err := attachCommandLine(bin, h.TmuxSocket(home.DefaultRoot(f.Getenv)), "NAME", nil)
	if err != nil {
		return long
	}
	return long + "\n\nIt runs this tmux command (NAME is the agent's name):\n\n  " + shellLine(argv)
}

// shellLine is argv as one line a shell reads back. A word starting
// with "=" is quoted too: zsh would expand =leo-bob to a command's path.
func shellLine(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = shellQuote(a)
		if q[i] == a && strings.HasPrefix(a, "=") {
			q[i] = "'" + a + "'"
		}
	}
	return strings.Join(q, " ")
}

func newAgentAttachCmd(f *Factory) *cobra.Command {
	cmd := attachCommand(f, "attach <name>", cobra.ExactArgs(1))
	cmd.Long = `Attach this terminal to the agent's tmux session; the same as 'leo attach <name>'.`
	return cmd
}

func attachCommand(f *Factory, use string, args cobra.PositionalArgs) *cobra.Command {
	opts := &AttachOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   use,
		Short: "Attach the terminal to an agent's TUI in tmux",
		Args:  cobra.MatchAll(args, agentNameArg(0)),
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := f.Home()
			if err != nil {
				return err
			}
			tm, err := f.Tmux(cmd.Context(), h)
			if err != nil {
				return fmt.Errorf("tmux not found on PATH: leo attach runs tmux")
			}
			if tm.Problem != "" {
				// Not a pending upgrade (the CLI is silent on those): no
				// tmux matches the running server, so attaching may fail.
				fmt.Fprintf(f.IO.ErrOut, "leo: warning: %s\n", tm.Problem)
			}
			opts.Client = client.New(h)
			opts.Tmux, opts.Socket = tm.Binary, h.TmuxSocket(home.DefaultRoot(f.Getenv))
			opts.CanPrompt = isInteractive(f.IO)
			opts.Terminal = attachTerminal(f.IO)
			if len(args) == 1 {
				opts.Name = args[0]
			}
			return runAttach(cmd.Context(), opts)
		},
	}
	defaultHelp := cmd.HelpFunc()
	cmd.SetHelpFunc(func(c *cobra.Command, args []string) {
		c.Long = attachHelp(f, c)
		defaultHelp(c, args)
	})
	return cmd
}

// attachTerminal reports whether stdin is a terminal: tmux attach needs
// one. Tests that capture the exec swap it.
var attachTerminal = func(ios *IOStreams) bool {
	in, ok := ios.In.(*os.File)
	return ok && term.IsTerminal(int(in.Fd()))
}

// attachExec replaces leo with tmux, handing it the terminal. Tests swap it.
var attachExec = syscall.Exec

func runAttach(ctx context.Context, opts *AttachOptions) error {
	name, err := pickAgent(ctx, opts)
	if err != nil {
		return err
	}
	env := opts.Environ
	if env == nil {
		env = os.Environ()
	}
	exec := opts.Exec
	if exec == nil {
		exec = attachExec
	}
	argv, env, err := attachCommandLine(opts.Tmux, opts.Socket, name, env)
	if err != nil {
		return err
	}
	if !opts.Terminal {
		// tmux would only say "open terminal failed: not a terminal".
		return usageErrorf("leo attach needs a terminal (stdin is not one); from a terminal, run: %s", shellLine(argv))
	}
	if err := exec(opts.Tmux, argv, env); err != nil {
		return fmt.Errorf("run %s: %w", opts.Tmux, err)
	}
	return nil
}

// attachCommandLine is the tmux command that attaches a person to agent
// name. tmux owns the knowledge: the exact session on this home's server,
// with TMUX dropped (leo's server is not the user's own, so attaching from
// inside tmux is fine).
func attachCommandLine(tmuxPath, socket, name string, env []string) (argv, attachEnv []string, err error) {
	tm, err := tmux.New(tmux.Options{Socket: socket, Binary: tmuxPath, Env: env})
	if err != nil {
		return nil, nil, err
	}
	return tm.AttachArgv(agent.TmuxSession(name)), tm.AttachEnv(), nil
}

// pickAgent settles which agent to attach to and checks it has a session.
// A daemon that does not answer does not stop an attach by name: agents
// keep running in tmux without it.
func pickAgent(ctx context.Context, opts *AttachOptions) (string, error) {
	if opts.Name != "" {
		a, err := opts.Client.Get(ctx, opts.Name)
		switch {
		case client.IsDaemonDown(err):
			fmt.Fprintf(opts.IO.ErrOut, "leo: %v; attaching to tmux directly\n", err)
			return opts.Name, nil
		case err != nil:
			return "", err
		case a.State == api.StateStopped:
			return "", api.Errorf(api.CodeAgentStopped, "agent %s is stopped; start it with: leo agent start %s", a.Name, a.Name)
		}
		return a.Name, nil
	}
	agents, err := opts.Client.List(ctx)
	if err != nil {
		return "", err
	}
	var live []api.Agent
	for _, a := range agents {
		if a.State != api.StateStopped {
			live = append(live, a)
		}
	}
	switch {
	case len(live) == 1:
		return live[0].Name, nil
	case len(live) == 0 && len(agents) == 0:
		return "", api.Errorf(api.CodeNotFound, "no agents to attach to; spawn one with: leo agent spawn <template>")
	case len(live) == 0:
		return "", api.Errorf(api.CodeAgentStopped, "every agent is stopped; start one with: leo agent start <name>")
	case !opts.CanPrompt:
		names := make([]string, len(live))
		for i, a := range live {
			names[i] = a.Name
		}
		return "", usageErrorf("%d agents are running (%s); name one: leo attach <name>", len(live), strings.Join(names, ", "))
	}
	return choose(opts.IO, live)
}

// choose offers a numbered list on stderr and reads the choice.
func choose(ios *IOStreams, agents []api.Agent) (string, error) {
	for i, a := range agents {
		fmt.Fprintf(ios.ErrOut, "  %d) %s (%s, %s)\n", i+1, a.Name, a.Harness, a.State)
	}
	fmt.Fprintf(ios.ErrOut, "attach to [1-%d]: ", len(agents))
	line, _ := bufio.NewReader(ios.In).ReadString('\n')
	line = strings.TrimSpace(line)
	if n, err := strconv.Atoi(line); err == nil && n >= 1 && n <= len(agents) {
		return agents[n-1].Name, nil
	}
	for _, a := range agents {
		if a.Name == line {
			return a.Name, nil
		}
	}
	return "", usageErrorf("no agent chosen (got %q)", line)
}
