package api

// DrainRequest is POST /drain: pause deliveries and wait until no agent
// has a turn in flight (the graceful restart and the handovers).
type DrainRequest struct {
	// TimeoutSeconds bounds the wait (default 60, at most 3600). When busy
	// agents remain after it, the drain answers drain_timeout, naming them,
	// and deliveries resume.
	TimeoutSeconds float64 `json:"timeout_seconds,omitempty"`
	// Force skips the wait: deliveries pause and the answer comes at once,
	// Busy naming who was still working.
	Force bool `json:"force,omitempty"`
	// HoldSeconds is how long the pause lasts without POST /drain/resume
	// (default 120, at most 3600): a caller that dies after draining never
	// leaves the daemon holding messages for good.
	HoldSeconds float64 `json:"hold_seconds,omitempty"`
}

// DrainResult is POST /drain's answer.
type DrainResult struct {
	// Drained: no agent had a turn in flight when the drain returned.
	Drained bool `json:"drained"`
	// Paused: deliveries are held until /drain/resume or the hold ends.
	Paused bool `json:"paused"`
	// Busy names what was still working (forced drains only; a drain that
	// times out fails with drain_timeout instead).
	Busy []string `json:"busy,omitempty"`
	// WaitedMS is how long the drain waited.
	WaitedMS int64 `json:"waited_ms"`
}
