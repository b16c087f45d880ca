package dispatch

import (
	"bytes"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"arena/matches"
	"arena/orchestrator"
	"arena/orchestrator/fake"
)

// repeated is n bytes of b, made as they are read.
type repeated struct {
	b byte
	n int64
}

func (r *repeated) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	k := min(int64(len(p)), r.n)
	for i := range p[:k] {
		p[i] = r.b
	}
	r.n -= k
	return int(k), nil
}

// allocated is what f allocated, in bytes (logged).
func allocated(t *testing.T, f func()) uint64 {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	n := after.TotalAlloc - before.TotalAlloc
	t.Logf("allocated %.1f MiB", float64(n)/(1<<20))
	return n
}

// A worker's replay whose second frame holds a 1 GiB answer (its first
// frame and its header the match's) is refused as soon as the frame
// passes its bound, whether it is checked as it streams into the spool
// or decoded from the object store: the server reads no more of it than
// the bound, and says what is over it.
func TestAReportedReplayOverItsBoundIsRefusedPromptly(t *testing.T) {
	req := request(t, "bbbbbbbbbbb1", nil)
	rep, err := orchestrator.New(fake.NewLauncher(bots(nil))).Play(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	rep.Frames = rep.Frames[:1]
	data, err := matches.EncodeReplay(rep)
	if err != nil {
		t.Fatal(err)
	}
	cut := bytes.Index(data, []byte(`],"result":`))
	const gib = 1 << 30
	forged := func() (io.Reader, *repeated) {
		answer := &repeated{b: 'a', n: gib}
		return io.MultiReader(bytes.NewReader(data[:cut]), strings.NewReader(`,{"turn":1,"state":{},"bots":[{"seat":0,"asked":true,"answer":"`),
			answer, strings.NewReader(`","status":"ok"}]}`), bytes.NewReader(data[cut:])), answer
	}
	spool := t.TempDir()
	d := &Dispatcher{cfg: DispatcherConfig{Spool: spool}}
	bound := d.bounds(req).Frame
	if bound != 16<<20 {
		t.Fatalf("a Snake replay's frame bound is %d", bound)
	}
	for name, read := range map[string]func(io.Reader) error{
		"into the spool": func(r io.Reader) error {
			_, err := d.spool(req, r, &viewer{})
			return err
		},
		"from the object store": func(r io.Reader) error {
			_, err := decodeObject(r, d.bounds(req))
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			r, answer := forged()
			var err error
			if n := allocated(t, func() { err = read(r) }); n > 200<<20 {
				t.Errorf("the server allocated %d MiB", n>>20)
			}
			if err == nil || !strings.Contains(err.Error(), "frame 1 is over its bound of 16 MiB") {
				t.Errorf("got %v", err)
			}
			if !aboutTheReplay(err) {
				t.Errorf("the error would be read again: %v", err)
			}
			if read := gib - answer.n; read > bound {
				t.Errorf("%d bytes of the answer read, the frame bound is %d", read, bound)
			}
			if files, _ := os.ReadDir(spool); len(files) != 0 {
				t.Errorf("%d files left in the spool", len(files))
			}
		})
	}
}

// A worker whose replay records an answer no bot of the game could send
// (over 6× the game's cap, every byte escaped) is refused, whichever way
// its replay travels, the refusal saying what is over its bound, and the
// match is played again by another.
func TestAWorkersReplayOverItsBoundIsRefused(t *testing.T) {
	for _, c := range []struct {
		name   string
		inline int
		spool  bool
	}{{"inline", 0, false}, {"through the object store", 1, false}, {"into the spool", 1, true}} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, Config{})
			if c.spool {
				r.d.cfg.Spool = t.TempDir()
			}
			id := "bbbbbbbbbb" + string(rune('a'+c.inline)) + string(rune('a'+len(c.name)%26))
			f := &forger{times: 1, forge: func(rep *matches.Replay) {
				rep.Frames[1].Bots[0].Answer = strings.Repeat("a", 64<<10)
			}}
			bad := r.worker("forger", bots(nil), WorkerConfig{Player: f, InlineMax: c.inline})
			var rep *matches.Replay
			var err error
			var wg sync.WaitGroup
			wg.Go(func() { rep, err = r.d.Play(t.Context(), request(t, id, nil)) })
			waitFor(t, "the forger's result is refused", func() bool { return r.refused("forger") == 1 })
			bad.stop()
			r.worker("honest", bots(nil), WorkerConfig{InlineMax: c.inline})
			wg.Wait()
			if err != nil {
				t.Fatal(err)
			}
			if rep.Result.Worker != "honest" {
				t.Errorf("the result is %s's", rep.Result.Worker)
			}
			s := r.d.Workers()
			i := slices.IndexFunc(s, func(w WorkerStanding) bool { return w.Name == "forger" })
			if i < 0 || !strings.Contains(s[i].LastRefusal, "the answer of seat 0 in frame 1 (64 KiB) is over its bound of 25 KiB") {
				t.Errorf("the forger's standing: %+v", s)
			}
		})
	}
}
