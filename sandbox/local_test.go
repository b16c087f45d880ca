package sandbox_test

import (
	"context"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"arena/internal/dockertest"
	"arena/sandbox"
)

func TestSplitCommand(t *testing.T) {
	tests := []struct {
		give    string
		want    []string
		wantErr bool
	}{
		{give: "./mybot", want: []string{"./mybot"}},
		{give: "python3 bot.py", want: []string{"python3", "bot.py"}},
		{give: "  python3   bot.py  ", want: []string{"python3", "bot.py"}},
		{give: `'python3 bot.py'`, want: []string{"python3 bot.py"}},
		{give: `node "my bot.js" --fast`, want: []string{"node", "my bot.js", "--fast"}},
		{give: `a\ b "x\"y" 'it''s'`, want: []string{"a b", `x"y`, "its"}},
		{give: "", want: nil},
		{give: `'open`, wantErr: true},
		{give: `"open`, wantErr: true},
	}
	for _, tt := range tests {
		got, err := sandbox.SplitCommand(tt.give)
		if (err != nil) != tt.wantErr || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("SplitCommand(%q) = %q, %v; want %q (error %v)", tt.give, got, err, tt.want, tt.wantErr)
		}
	}
}

func newLocal(t *testing.T) *sandbox.Local {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs bot processes (skipped with -short)")
	}
	l, err := sandbox.NewLocal(sandbox.DefaultPolicy(), zaptest.NewLogger(t), dockertest.GoBinary(t, dockertest.Root(), "./cmd/arena"))
	if err != nil {
		t.Fatal(err)
	}
	isolated, why := l.Isolated()
	if os.Geteuid() == 0 && !isolated {
		t.Fatalf("running as root but local bots are not isolated: %s", why)
	}
	return l
}

func startLocal(t *testing.T, l *sandbox.Local, mode string) *sandbox.Process {
	t.Helper()
	bin := dockertest.GoBinary(t, dockertest.Root(), "./internal/testbots/tankbot")
	img, err := l.Image("exec:" + bin + " " + mode)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(img.ID, "exec:sha256:") {
		t.Errorf("image id %q", img.ID)
	}
	p, err := l.Start(t.Context(), sandbox.Spec{Image: img, BotID: "local", MaxMessageBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(context.Background()) })
	return p
}

func TestLocalBot(t *testing.T) {
	l := newLocal(t)
	p := startLocal(t, l, "probe")
	deadline := time.Now().Add(10 * time.Second)
	for turn := 0; turn < 3; turn++ {
		if err := p.Send([]byte(stateLine), deadline); err != nil {
			t.Fatal(err)
		}
		if got, err := p.Receive(t.Context(), deadline); err != nil || string(got) != "[]" {
			t.Fatalf("turn %d: %q, %v", turn, got, err)
		}
	}
	if stderr := string(p.TakeStderr().Text); !strings.Contains(stderr, `"BotID":"local"`) {
		t.Errorf("ARENA_BOT_ID not in the environment: %q", stderr)
	}
	if isolated, _ := l.Isolated(); isolated {
		if u := p.Usage(); u.Source == "" || u.CPU <= 0 {
			t.Errorf("usage of an isolated bot: %+v", u)
		}
	}
	if exit := p.Stop(t.Context()); exit.Code != 137 {
		t.Errorf("stopped: %+v, want killed", exit)
	}
}

func TestLocalBotMemoryLimit(t *testing.T) {
	l := newLocal(t)
	if isolated, why := l.Isolated(); !isolated {
		t.Skipf("local bots are not isolated here (%s): no limit to test", why)
	}
	p := startLocal(t, l, "oom-at=1")
	deadline := time.Now().Add(20 * time.Second)
	if err := p.Send([]byte(stateLine), deadline); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Receive(t.Context(), deadline); !errors.Is(err, sandbox.ErrClosed) {
		t.Fatalf("err = %v, want the output closed by the OOM kill", err)
	}
	if exit := p.Exit(t.Context()); !exit.OOMKilled {
		t.Errorf("exit = %+v, want OOM killed", exit)
	}
}

func TestLocalImageErrors(t *testing.T) {
	l := newLocal(t)
	for _, ref := range []string{"exec:", "exec:'unterminated", "exec:/no/such/program"} {
		if _, err := l.Image(ref); !errors.Is(err, sandbox.ErrBadReference) {
			t.Errorf("%q: %v, want ErrBadReference", ref, err)
		}
	}
}
