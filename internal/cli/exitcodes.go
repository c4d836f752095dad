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
)

// Codes the CLI itself answers with, beyond those of internal/api.
const (
	// CodeUnsupported: the command exists but this build cannot do it yet.
	CodeUnsupported api.Code = "unsupported"
	// CodeRunFailed: `leo run <task>` ran the task and the run did not
	// succeed (failed, timed out or was skipped).
	CodeRunFailed api.Code = "run_failed"
)

// ExitCodeOf maps an error returned by Run to the process exit status. It is
// the one place where error codes become exit codes.
func ExitCodeOf(err error) ExitCode {
	if err == nil {
		return ExitOK
	}
	switch codeOf(err) {
	case api.CodeInvalidArgs:
		return ExitUsage
	case api.CodeConfigError:
		return ExitConfig
	case api.CodeDaemonDown:
		return ExitDaemonDown
	case api.CodeOutcomeUnknown:
		return ExitOutcomeUnknown
	default:
		return ExitError
	}
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
