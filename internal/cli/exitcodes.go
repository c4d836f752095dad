package cli

import (
	"errors"

	"github.com/blackpaw-studio/leo/internal/api"
)

// ExitCode is the status leo exits with. The codes are documented in
// docs/cli.md and are an API: scripts branch on them.
type ExitCode int

const (
	// ExitOK: the command did what was asked.
	ExitOK ExitCode = 0
	// ExitError: any failure without a more specific code below.
	ExitError ExitCode = 1
	// ExitUsage: bad flags, arguments or an unknown command (invalid_args).
	ExitUsage ExitCode = 2
	// ExitConfig: leo.yaml is missing, unreadable or invalid (config_error).
	ExitConfig ExitCode = 3
	// ExitDaemonDown: no daemon answers on this home's socket (daemon_down).
	ExitDaemonDown ExitCode = 4
	// ExitOutcomeUnknown: the daemon got a change but did not answer
	// (outcome_unknown): it may have been carried out.
	ExitOutcomeUnknown ExitCode = 5
	// ExitWaitTimeout: send --wait/--reply ran out of time (wait_timeout);
	// the message goes on.
	ExitWaitTimeout ExitCode = 6
)

// ExitCodeOf maps an error returned by Run to the process exit status: the
// Exit column of api.Codes, the one table of error codes.
func ExitCodeOf(err error) ExitCode {
	if err == nil {
		return ExitOK
	}
	return ExitCode(api.ExitStatus(codeOf(err)))
}

// codeOf returns the stable code of err: the code an error carries, or
// internal for an uncoded one.
func codeOf(err error) api.Code {
	var coded interface{ ErrorCode() api.Code }
	if errors.As(err, &coded) {
		return coded.ErrorCode()
	}
	return api.CodeOf(err)
}
