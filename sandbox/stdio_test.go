package sandbox

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"arena/framing"
)

// collect drains a framer after feeding it chunks.
func feed(t *testing.T, f *framer, chunks ...string) {
	t.Helper()
	for _, c := range chunks {
		if n, err := f.Write([]byte(c)); err != nil || n != len(c) {
			t.Fatalf("Write(%q) = %d, %v", c, n, err)
		}
	}
}

func drain(f *framer) (msgs []string, err error) {
	for {
		select {
		case fr, ok := <-f.out:
			if !ok {
				return msgs, nil
			}
			if fr.err != nil {
				return msgs, fr.err
			}
			msgs = append(msgs, string(fr.data))
		default:
			return msgs, nil
		}
	}
}

func TestFramerQueuesMessagesAndTheLimit(t *testing.T) {
	f := newFramer(framing.Lines, 16, make(chan struct{}))
	feed(t, f, "[]\n[{", "\"a\":1}]\n", strings.Repeat("x", 17)+"\n")
	msgs, err := drain(f)
	if want := []string{"[]", `[{"a":1}]`}; strings.Join(msgs, "|") != strings.Join(want, "|") || !errors.Is(err, ErrOutputLimit) {
		t.Errorf("messages = %q, %v; want %q and ErrOutputLimit", msgs, err, want)
	}
	// Whatever follows is discarded.
	feed(t, f, "[]\n")
	if msgs, err := drain(f); len(msgs) != 0 || err != nil {
		t.Errorf("after the limit: %q, %v", msgs, err)
	}
}

func TestFramerBlocksWhenFullAndStopsWhenDone(t *testing.T) {
	done := make(chan struct{})
	f := newFramer(framing.Lines, 16, done)
	feed(t, f, strings.Repeat("[]\n", framesQueued))
	wrote := make(chan error, 1)
	go func() {
		_, err := f.Write([]byte("one too many\n"))
		wrote <- err
	}()
	select {
	case err := <-wrote:
		t.Fatalf("Write returned %v with the queue full", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(done)
	if err := <-wrote; !errors.Is(err, ErrClosed) {
		t.Errorf("after done: %v, want ErrClosed", err)
	}
}

func TestReceive(t *testing.T) {
	f := newFramer(framing.Lines, 64, make(chan struct{}))
	s := stdio{frames: f.out, stderr: &stderrBuffer{caps: DefaultStderrCaps}}
	feed(t, f, "early\n")
	// A message sent before it was asked for is kept.
	if got, err := s.Receive(t.Context(), time.Now()); err != nil || string(got) != "early" {
		t.Fatalf("Receive = %q, %v", got, err)
	}
	// A message that arrived after the deadline is late, however soon it
	// is looked at: here, a millisecond late.
	cutoff := time.Now().Add(-time.Millisecond)
	feed(t, f, "late\n")
	if _, err := s.Receive(t.Context(), cutoff); !errors.Is(err, ErrTimeout) {
		t.Fatalf("a late message: %v, want ErrTimeout", err)
	}
	// Late for that deadline, it is still the next message: a later
	// deadline (the cap moved on by the time the bot waited for a CPU)
	// takes it, however many times the timer fired first.
	if _, err := s.Receive(t.Context(), cutoff); !errors.Is(err, ErrTimeout) {
		t.Fatalf("the late message again: %v, want ErrTimeout", err)
	}
	if got, err := s.Receive(t.Context(), time.Now()); err != nil || string(got) != "late" {
		t.Fatalf("the late message, given more time: %q, %v", got, err)
	}
	start := time.Now()
	if _, err := s.Receive(t.Context(), start.Add(30*time.Millisecond)); !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	if took := time.Since(start); took < 30*time.Millisecond {
		t.Errorf("timed out after %v, before the deadline", took)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := s.Receive(ctx, time.Now().Add(time.Hour)); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	f.closeWith(ErrClosed)
	if _, err := s.Receive(t.Context(), time.Now().Add(time.Second)); !errors.Is(err, ErrClosed) {
		t.Errorf("after the end: %v, want ErrClosed", err)
	}
	// The end is sticky.
	if _, err := s.Receive(t.Context(), time.Now().Add(time.Second)); !errors.Is(err, ErrClosed) {
		t.Errorf("again after the end: %v, want ErrClosed", err)
	}
}

func TestStderrCaps(t *testing.T) {
	s := &stderrBuffer{caps: StderrCaps{PerTake: 10, Total: 25}}
	s.Write([]byte("0123456789abc"))
	if got := s.take(); string(got.Text) != "0123456789" || got.Dropped != 3 {
		t.Errorf("first take: %q dropped %d", got.Text, got.Dropped)
	}
	s.Write([]byte("short"))
	if got := s.take(); string(got.Text) != "short" || got.Dropped != 0 {
		t.Errorf("second take: %q dropped %d", got.Text, got.Dropped)
	}
	s.Write(bytes.Repeat([]byte("z"), 100))
	if got := s.take(); len(got.Text) != 10 || got.Dropped != 90 {
		t.Errorf("third take: %d bytes, dropped %d", len(got.Text), got.Dropped)
	}
	// 25 bytes kept in all: nothing more.
	s.Write([]byte("more"))
	if got := s.take(); len(got.Text) != 0 || got.Dropped != 4 {
		t.Errorf("over the total: %q dropped %d", got.Text, got.Dropped)
	}
}

func TestUnread(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	s := stdio{stdin: w, deadline: w.SetWriteDeadline}
	if err := s.Send([]byte("final\n"), time.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if n, ok := s.Unread(); !ok || n != 6 {
		t.Fatalf("after a send: Unread() = %d, %v, want 6, true", n, ok)
	}
	if _, err := r.Read(make([]byte, 16)); err != nil {
		t.Fatal(err)
	}
	if n, ok := s.Unread(); !ok || n != 0 {
		t.Fatalf("after the bot read: Unread() = %d, %v, want 0, true", n, ok)
	}
	var buf bytes.Buffer
	if _, ok := (&stdio{stdin: &buf}).Unread(); ok {
		t.Error("Unread known for a stdin that is no pipe")
	}
}

func TestLaunchFailure(t *testing.T) {
	tests := []struct {
		exit   Exit
		stderr string
		want   string
		ok     bool
	}{
		{Exit{Code: 127}, "launch: exec /bot: no such file or directory\n", "exec /bot: no such file or directory", true},
		{Exit{Code: 127}, "join: exec ./bot: exec format error\n", "exec ./bot: exec format error", true},
		{Exit{Code: 127}, "[FATAL tini (8)] exec /no/such/bot failed: No such file or directory\n", "exec /no/such/bot failed: No such file or directory", true},
		{Exit{Code: 1}, "launch: exec /bot: no such file or directory\n", "", false},
		{Exit{Code: 127}, "sh: 1: python: not found\n", "", false},
		{Exit{Code: 127}, "", "", false},
		{Exit{Code: 127, Err: errors.New("unseen")}, "launch: x\n", "", false},
	}
	for _, tt := range tests {
		if got, ok := LaunchFailure(tt.exit, []byte(tt.stderr)); got != tt.want || ok != tt.ok {
			t.Errorf("LaunchFailure(%+v, %q) = %q, %v; want %q, %v", tt.exit, tt.stderr, got, ok, tt.want, tt.ok)
		}
	}
}
