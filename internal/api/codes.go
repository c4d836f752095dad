package api

import "net/http"

// Code is a stable, documented error code. Codes are an API: never rename one.
// Every code leo answers with is a constant here and a row of Codes; the
// packages that answer with one (the daemon, the client, the CLI, the
// handover, doctor) use these constants, and docs/cli.md lists them all
// (TestDocsListEveryCode).
type Code string

const (
	CodeInvalidArgs     Code = "invalid_args"
	CodeNotFound        Code = "not_found"
	CodeAgentRunning    Code = "agent_running"
	CodeAgentExists     Code = "agent_exists"
	CodeAgentStopped    Code = "agent_stopped"
	CodeClaudeNotFound  Code = "claude_not_found"
	CodeHarnessNotFound Code = "harness_not_found"
	CodeConfigError     Code = "config_error"
	CodeNotReady        Code = "not_ready"
	CodeDeliveryFailed  Code = "delivery_failed"
	CodeQueueFull       Code = "queue_full"
	CodeTaskRunning     Code = "task_running"
	CodeTmux            Code = "tmux_error"
	CodeInternal        Code = "internal"
	CodeDaemonDown      Code = "daemon_down"
	// CodeOutcomeUnknown (client side): a change reached the daemon but no
	// answer came back (a stopped or stuck daemon, a dropped connection):
	// it may have been carried out, or may still be. Retry a send with the
	// same id (SendRequest.ID) and it is never queued twice.
	CodeOutcomeUnknown Code = "outcome_unknown"
	CodeDrainTimeout   Code = "drain_timeout"
	CodeUnauthorized   Code = "unauthorized"
	CodeForbidden      Code = "forbidden"
	CodeDaemonRunning  Code = "daemon_running"
	// CodeWaitTimeout: a send that waits (--wait, --reply) ran out of
	// time; the message is not cancelled and stays queued or in flight.
	CodeWaitTimeout Code = "wait_timeout"
	// CodeWorktreeDirty, CodeWorktreeUnmerged: a delete that would lose
	// the agent's uncommitted changes, or commits on neither its base
	// nor any remote; nothing was changed.
	CodeWorktreeDirty    Code = "worktree_dirty"
	CodeWorktreeUnmerged Code = "worktree_unmerged"
	// Answering a prompt (leo agent approve|deny|answer): none shown, not
	// the one named, one leo cannot read (kind dialog), or not an answer
	// the prompt offers. Nothing was pressed.
	CodeNoPrompt           Code = "no_prompt"
	CodePromptChanged      Code = "prompt_changed"
	CodePromptUnanswerable Code = "prompt_unanswerable"
	CodeNotOffered         Code = "not_offered"

	// The CLI's own codes.
	CodeUnsupported   Code = "unsupported"
	CodeRunFailed     Code = "run_failed"
	CodeChecksFailed  Code = "checks_failed"
	CodeNotRegistered Code = "not_registered"
	CodeRestartFailed Code = "restart_failed"
	CodeDrainFailed   Code = "drain_failed"
	CodeServiceFailed Code = "service_failed"
	CodeNotifyFailed  Code = "notify_failed"
	CodeTurnFailed    Code = "turn_failed"

	// The handover's (leo service handover, docs/managed-install.md).
	CodeAlreadyManaged     Code = "already_managed"
	CodeInvalidLabel       Code = "invalid_label"
	CodeLabelConflict      Code = "label_conflict"
	CodeNoLaunchdJob       Code = "no_launchd_job"
	CodePlistMissing       Code = "plist_missing"
	CodeEnvUnreadable      Code = "env_unreadable"
	CodeBootoutFailed      Code = "bootout_failed"
	CodePlistMoveFailed    Code = "plist_move_failed"
	CodeLockTimeout        Code = "lock_timeout"
	CodeNotManaged         Code = "not_managed"
	CodeBackupMissing      Code = "backup_missing"
	CodeBackupUnusable     Code = "backup_unusable"
	CodeMarkerMoveFailed   Code = "marker_move_failed"
	CodePlistRestoreFailed Code = "plist_restore_failed"
	CodeBootstrapFailed    Code = "bootstrap_failed"
	CodeManagedJobLoaded   Code = "managed_job_loaded"
	CodeNotPermitted       Code = "not_permitted"
)

// CodeInfo is one row of Codes.
type CodeInfo struct {
	Code Code
	// HTTP is the status the socket API and the HTTP API answer the code
	// with; 0 for a code no route answers (a client-side or CLI-only one),
	// which is 500 should one ever be.
	HTTP int
	// Exit is the CLI's exit status for the code (docs/cli.md, "Exit
	// codes"); 0 means 1, the status of any failure without its own.
	Exit int
	// Meaning says in one line when the code is given.
	Meaning string
}

// Codes is every error code, in the order docs/cli.md lists them.
var Codes = []CodeInfo{
	{CodeInvalidArgs, http.StatusBadRequest, 2, "a bad flag, argument, name, body, field or query"},
	{CodeConfigError, http.StatusUnprocessableEntity, 3, "leo.yaml is missing, unreadable or invalid (a reload keeps the running config)"},
	{CodeDaemonDown, 0, 4, "no daemon answers on this home's socket (client side)"},
	{CodeOutcomeUnknown, http.StatusGatewayTimeout, 5, "a change reached the daemon but no answer came back: it may have been carried out; retry a send with the same id"},
	{CodeWaitTimeout, http.StatusRequestTimeout, 6, "a send's --wait or --reply ran out of time; the message is not cancelled (it stays queued or in flight)"},
	{CodeNotFound, http.StatusNotFound, 0, "no such agent, task, template or route"},
	{CodeUnauthorized, http.StatusUnauthorized, 0, "the HTTP API without (or with a wrong) bearer token"},
	{CodeForbidden, http.StatusForbidden, 0, "a Host or Origin the web server does not answer to"},
	{CodeAgentRunning, http.StatusConflict, 0, "delete of an agent that is not stopped"},
	{CodeAgentExists, http.StatusConflict, 0, "spawn with a name in use"},
	{CodeWorktreeDirty, http.StatusConflict, 0, "delete of an agent whose worktree has uncommitted changes (they are named; --force discards them, --keep-worktree keeps them)"},
	{CodeWorktreeUnmerged, http.StatusConflict, 0, "delete of an agent whose branch has commits on neither its base nor any remote (they are named; --force removes the worktree and keeps the branch)"},
	{CodeAgentStopped, http.StatusConflict, 0, "send to (or attach to) an agent a person stopped"},
	{CodeTaskRunning, http.StatusConflict, 0, "run of a task whose run is going"},
	{CodeNoPrompt, http.StatusConflict, 0, "approve, deny or answer while the agent's screen shows no prompt; nothing was pressed"},
	{CodePromptChanged, http.StatusConflict, 0, "approve, deny or answer --prompt ID while the screen shows another prompt (answered in the TUI, or a new one); nothing was pressed"},
	{CodePromptUnanswerable, http.StatusConflict, 0, "the prompt shown is one leo cannot read (kind dialog) or answer: answer it in the TUI; nothing was pressed"},
	{CodeNotOffered, http.StatusConflict, 0, "the prompt shown does not offer that answer (--always without the harness's own always choice, text for a yes/no prompt); nothing was pressed"},
	{CodeDrainTimeout, http.StatusConflict, 0, "busy agents did not finish their turns within the drain's timeout"},
	{CodeClaudeNotFound, http.StatusFailedDependency, 0, "claude is not installed (the contract text of docs/managed-install.md)"},
	{CodeHarnessNotFound, http.StatusFailedDependency, 0, "another harness's CLI (codex, opencode) is not installed"},
	{CodeQueueFull, http.StatusTooManyRequests, 0, "the agent's message queue is full"},
	{CodeDeliveryFailed, http.StatusBadGateway, 0, "a message could not land in the agent's TUI"},
	{CodeNotReady, http.StatusServiceUnavailable, 0, "the daemon is still restoring agents, or a handed-over daemon never reported ready"},
	{CodeTmux, http.StatusInternalServerError, 0, "tmux failed"},
	{CodeInternal, http.StatusInternalServerError, 0, "a fault on leo's side"},
	{CodeDaemonRunning, 0, 0, "another daemon holds this home's daemon.lock"},
	{CodeUnsupported, 0, 0, "the command exists but this build or platform cannot do it"},
	{CodeRunFailed, 0, 0, "leo run ran the task and the run did not succeed (failed, timed out or skipped)"},
	{CodeChecksFailed, 0, 0, "leo doctor found a check that fails"},
	{CodeNotRegistered, 0, 0, "the service job is not loaded"},
	{CodeRestartFailed, 0, 0, "the service manager failed, or no new daemon reported ready in time"},
	{CodeDrainFailed, 0, 0, "the drain could not be asked or did not answer"},
	{CodeServiceFailed, 0, 0, "service install, uninstall, start or stop failed"},
	{CodeTurnFailed, 0, 0, "send --reply: the message was delivered and its turn ended in an error or was interrupted"},
	{CodeNotifyFailed, 0, 0, "leo notify test sent a sample and a notifier did not take it"},
	{CodeAlreadyManaged, 0, 0, "the app manages this home (managed.json exists)"},
	{CodeNotManaged, 0, 0, "handover --to-cli on a home that is not managed"},
	{CodeNotPermitted, 0, 0, "handover from inside an agent or task run leo launched"},
	{CodeInvalidLabel, 0, 0, "handover --label is not a valid launchd label"},
	{CodeLabelConflict, 0, 0, "handover --label is the CLI install's own label"},
	{CodeNoLaunchdJob, 0, 0, "a daemon holds the lock but launchd did not start it"},
	{CodePlistMissing, 0, 0, "the CLI install's LaunchAgent plist is missing"},
	{CodeEnvUnreadable, 0, 0, "the CLI job's plist (its environment) cannot be read"},
	{CodeBootoutFailed, 0, 0, "launchctl print or bootout failed"},
	{CodePlistMoveFailed, 0, 0, "the CLI job's plist could not be moved aside"},
	{CodeLockTimeout, 0, 0, "daemon.lock stayed held (or could not be probed) past the timeout"},
	{CodeBackupMissing, 0, 0, "handover --to-cli finds no backed-up CLI plist to restore"},
	{CodeBackupUnusable, 0, 0, "the backed-up CLI plist cannot be read or names no usable leo binary"},
	{CodeMarkerMoveFailed, 0, 0, "managed.json could not be moved aside"},
	{CodePlistRestoreFailed, 0, 0, "the backed-up CLI plist could not be put back"},
	{CodeBootstrapFailed, 0, 0, "launchctl bootstrap of the restored job failed"},
	{CodeManagedJobLoaded, 0, 0, "the app's launchd job is still registered"},
}

// info is code's row; the zero row for a code not in Codes. A scan of a
// few dozen rows, so nothing is built at init (cmd/leo's start-up budget).
func info(code Code) CodeInfo {
	for _, c := range Codes {
		if c.Code == code {
			return c
		}
	}
	return CodeInfo{}
}

// HTTPStatus maps a code to its HTTP status (Codes), 500 for a code no
// route answers or one not in the table.
func HTTPStatus(code Code) int {
	if c := info(code); c.HTTP != 0 {
		return c.HTTP
	}
	return http.StatusInternalServerError
}

// ExitStatus maps a code to the CLI's exit status (Codes), 1 for a code
// without its own.
func ExitStatus(code Code) int {
	if c := info(code); c.Exit != 0 {
		return c.Exit
	}
	return 1
}
