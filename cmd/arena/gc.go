package main

import (
	"os"
	"runtime/debug"
)

// longRunningGC is the garbage collector's target for the long-running
// commands (serve, worker) unless GOGC says otherwise: a heap may grow by
// half its live size between collections, not by all of it. A match's
// replay passes through these processes (spooled, checked, stored by
// NATS) as short-lived buffers; with Go's default (100) their headroom
// alone took a server 20 MiB past its target for a match whose bots
// write all they may (docs/performance.md, "Bounded output").
const longRunningGC = 50

// tuneGC sets longRunningGC unless the GOGC environment variable is set.
func tuneGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(longRunningGC)
	}
}
