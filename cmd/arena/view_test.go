package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"arena/internal/testsupport/poll"
)

// syncBuffer is a bytes.Buffer safe for a writer and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestReadKeys(t *testing.T) {
	r, w := io.Pipe()
	keys := readKeys(r)
	go func() {
		w.Write([]byte(" "))
		w.Write([]byte("\x1b[C"))
		w.Write([]byte("x"))
		w.Write([]byte("\x1b"))
		time.Sleep(100 * time.Millisecond) // Sleeps on purpose: a lone ESC is the Esc key.
		w.Write([]byte("q"))
		w.Close()
	}()
	var got []key
	for k := range keys {
		got = append(got, k)
	}
	if fmt.Sprint(got) != fmt.Sprint([]key{keySpace, keyRight, keyQuit, keyQuit}) {
		t.Errorf("keys %v", got)
	}
}

func TestTermView(t *testing.T) {
	var out syncBuffer
	render := func(frames []json.RawMessage, i int) string { return fmt.Sprintf("<frame %s>", frames[i]) }
	v := newTermView(&out, "test", 100, render)
	keys := make(chan key)
	quit := make(chan bool, 1)
	go func() { quit <- v.run(context.Background(), keys) }()
	for i := 0; i < 3; i++ {
		v.add(json.RawMessage(fmt.Sprint(i)))
	}
	waitFor := func(s string) {
		t.Helper()
		poll.Until(t, 5*time.Second, func() error {
			if got := out.String(); !strings.Contains(got, s) {
				return fmt.Errorf("never drew %q; got %q", s, got)
			}
			return nil
		})
	}
	waitFor("<frame 2>")
	keys <- keySpace // pause
	waitFor("paused")
	v.add(json.RawMessage("3"))
	v.add(json.RawMessage("4"))
	time.Sleep(50 * time.Millisecond) // Sleeps on purpose: time to move on, which it must not.
	if strings.Contains(out.String(), "<frame 3>") {
		t.Fatal("a paused view moved on")
	}
	keys <- keyRight // one step
	waitFor("<frame 3>")
	time.Sleep(50 * time.Millisecond) // Sleeps on purpose: time to step further, which it must not.
	if strings.Contains(out.String(), "<frame 4>") {
		t.Fatal("the right arrow stepped more than one frame")
	}
	keys <- keySpace // resume
	waitFor("<frame 4>")
	v.end()
	select {
	case q := <-quit:
		if q {
			t.Error("the view reported a quit at the end of the match")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the view did not end with the match")
	}
	// Esc quits at once.
	v2 := newTermView(&out, "test", 1, render)
	keys2 := make(chan key, 1)
	keys2 <- keyQuit
	if !v2.run(context.Background(), keys2) {
		t.Error("Esc did not quit")
	}
}
