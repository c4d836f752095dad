package cli

import "runtime/debug"

// oneShotHeapLimit caps the heap of a one-shot command that runs without
// periodic GC: past it the collector runs as usual.
const oneShotHeapLimit = 512 << 20

// oneShotGC turns periodic garbage collection off for a command that reads
// leo.yaml, prints and exits. Parsing a large config allocates tens of MB of
// short-lived YAML nodes; collecting them costs about a quarter of `leo
// validate`'s CPU on 1,000 templates and 1,000 tasks, and the process exits
// right after anyway. The memory limit keeps a pathological file bounded.
// Long-running commands (the daemon, attach) must not call it. It only acts
// when f.OneShotGC is set (by main): the setting is process-wide, and a test
// binary running many commands must keep its collector.
func (f *Factory) oneShotGC() {
	if !f.OneShotGC {
		return
	}
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(oneShotHeapLimit)
}
