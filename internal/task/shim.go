package task

import (
	"context"
	"time"

	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/harness"
)

// Temporary until the config and runner branches land.
const defaultMaxConcurrentRuns = 4

func catchUpOf(*config.Resolved) bool     { return true }
func describeSchedule(expr string) string { return expr }

type Job struct {
	ID        string
	Task      string
	Trigger   Trigger
	Due       time.Time
	Scope     *config.Resolved
	Prompt    string
	SessionID string
	Bridge    *harness.MCPBridge
}

var _ = context.Background
