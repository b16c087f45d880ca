package sandbox

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// testFreezer is a freezer whose cgroup freezer file is a plain file:
// what it holds is what was written to it.
func testFreezer(t *testing.T) (*freezer, func() string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "freezer.state")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	a := &accounting{procsPath: path, freezeFile: f, frozenWord: []byte("F"), thawedWord: []byte("T")}
	written := func() string {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	return &freezer{acct: a}, written
}

// A bot is frozen once its answer is passed on, and thawed when asked
// again; a freeze still due when it is asked again is not made.
func TestTheFreezeIsMadeOffTheAnswersPath(t *testing.T) {
	f, written := testFreezer(t)
	if err := f.thaw(); err != nil {
		t.Fatal(err)
	}
	freeze := f.answered()
	if freeze == nil {
		t.Fatal("no freeze due at the answer")
	}
	if got := written(); got != "" || f.isFrozen() {
		t.Fatalf("frozen before the answer was passed on: %q", got)
	}
	if f.answered() != nil {
		t.Error("a second message of the same answer makes another freeze due")
	}
	freeze()
	if got := written(); got != "F" || !f.isFrozen() {
		t.Fatalf("after the freeze: %q, frozen %v; want F, true", got, f.isFrozen())
	}
	f.thaw()
	if got := written(); got != "FT" || f.isFrozen() {
		t.Fatalf("after the thaw: %q, frozen %v; want FT, false", got, f.isFrozen())
	}

	// Asked again before the freeze was made: neither freeze nor thaw.
	freeze = f.answered()
	f.thaw()
	freeze()
	if got := written(); got != "FT" || f.isFrozen() {
		t.Errorf("a freeze cancelled by the next thaw: %q, frozen %v; want FT, false", got, f.isFrozen())
	}

	// Released (the bot is being stopped) before the freeze was made.
	freeze = f.answered()
	f.release()
	freeze()
	if got := written(); got != "FTT" || f.isFrozen() {
		t.Errorf("a freeze after the release: %q, frozen %v; want FTT (the release's thaw), false", got, f.isFrozen())
	}
}

// A bot let run between its answers has no freeze due.
func TestABotLetRunIsNotFrozen(t *testing.T) {
	f, written := testFreezer(t)
	f.letRun.Store(true)
	f.thaw()
	if freeze := f.answered(); freeze != nil {
		freeze()
	}
	if got := written(); got != "" {
		t.Errorf("a bot let run: %q written, want nothing", got)
	}
}

// The freeze reads the bot's figures once it is made, off the answer's
// path; they stand while the bot stays frozen, and are gone at its thaw
// or when no freeze was made.
func TestTheFreezeReadsTheFigures(t *testing.T) {
	f, _ := testFreezer(t)
	dir := t.TempDir()
	open := func(name, content string) *os.File {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		file, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { file.Close() })
		return file
	}
	f.acct.cpuFile, f.acct.cpuScale = open("cpuacct.usage", "1500000000\n"), time.Nanosecond
	f.acct.memFile = open("memory.max_usage_in_bytes", "7340032\n")
	if _, _, ok := f.frozenFigures(); ok {
		t.Fatal("figures before any freeze")
	}
	f.thaw()
	freeze := f.answered()
	if _, _, ok := f.frozenFigures(); ok {
		t.Fatal("figures before the freeze was made")
	}
	freeze()
	os.WriteFile(filepath.Join(dir, "cpuacct.usage"), []byte("9000000000\n"), 0o644)
	s, peak, ok := f.frozenFigures()
	if !ok || s.CPU != 1500*time.Millisecond || peak != 7340032 {
		t.Fatalf("figures of the freeze = %+v, %d, %v; want 1.5s, 7340032, true", s, peak, ok)
	}
	f.thaw()
	if _, _, ok := f.frozenFigures(); ok {
		t.Error("figures of a freeze that was thawed")
	}
	freeze = f.answered()
	f.thaw()
	freeze()
	if _, _, ok := f.frozenFigures(); ok {
		t.Error("figures of a freeze that was cancelled")
	}
}
