package orchestrator

import "testing"

// A crash is explained by its reason, not by whatever line came last: a
// Go panic's message and where it happened, a Python exception and its
// deepest frame, else the last line.
func TestCrashReason(t *testing.T) {
	goPanic := "thinking\npanic: runtime error: index out of range [5] with length 3\n\ngoroutine 1 [running]:\nmain.move(...)\n\t/src/bot/main.go:42\nmain.main()\n\t/src/bot/main.go:17 +0x1d4\n"
	goExplicit := "panic: no tank of mine\n\ngoroutine 1 [running]:\npanic({0x4a2b40?, 0xc00001c0a0?})\n\t/usr/local/go/src/runtime/panic.go:779 +0x158\nmain.main()\n\t/src/bot/main.go:9 +0x25\n"
	python := "turn 4\nTraceback (most recent call last):\n  File \"/bot/bot.py\", line 30, in <module>\n    main()\n  File \"/bot/tanks.py\", line 12, in decide\n    return moves[7]\nIndexError: list index out of range\n"
	for tail, want := range map[string]string{
		goPanic:                      "panic: runtime error: index out of range [5] with length 3 (at main.move(...), /src/bot/main.go:42)",
		goExplicit:                   "panic: no tank of mine (at main.main(), /src/bot/main.go:9)",
		python:                       `IndexError: list index out of range (File "/bot/tanks.py", line 12, in decide)`,
		"a\nlast words\n":            "last words",
		"":                           "",
		"fatal error: out of memory": "fatal error: out of memory",
	} {
		if got := crashReason(tail); got != want {
			t.Errorf("crashReason(%q)\n = %q\nwant %q", tail, got, want)
		}
	}
}
