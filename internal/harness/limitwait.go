package harness

// LimitWaiter is implemented by adapters whose harness may wait out a
// usage limit itself (it queues what is typed until the reset, or works on
// at a lower priority): leo then types nothing into it — no continue —
// and says so. The screen is where the harness says it waits.
type LimitWaiter interface {
	// WaitsOutLimit reports whether the capture shows the harness waiting
	// for a usage limit's reset (or for capacity) by itself.
	WaitsOutLimit(capture string) bool
}
