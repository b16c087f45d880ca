package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// key is a key press the terminal viewer understands.
type key int

const (
	keySpace key = iota
	keyRight
	keyQuit
)

// readKeys turns raw terminal input into keys: space, the right arrow
// (ESC [ C), and Esc, q or Ctrl-C to quit. An ESC not followed by '['
// within a moment is the Esc key itself.
func readKeys(r io.Reader) <-chan key {
	bytesIn := make(chan byte, 16)
	go func() {
		defer close(bytesIn)
		b := make([]byte, 1)
		for {
			if _, err := r.Read(b); err != nil {
				return
			}
			bytesIn <- b[0]
		}
	}()
	keys := make(chan key, 16)
	go func() {
		defer close(keys)
		next := func(wait time.Duration) (byte, bool) {
			select {
			case b, ok := <-bytesIn:
				return b, ok
			case <-time.After(wait):
				return 0, false
			}
		}
		for b := range bytesIn {
			switch b {
			case ' ':
				keys <- keySpace
			case 'q', 'Q', 3:
				keys <- keyQuit
			case 0x1b:
				if c, ok := next(50 * time.Millisecond); !ok || c != '[' {
					keys <- keyQuit
					continue
				}
				if c, ok := next(50 * time.Millisecond); ok && c == 'C' {
					keys <- keyRight
				}
			}
		}
	}()
	return keys
}

// termView draws a match in the terminal as it is played: frames are shown
// in order at a steady pace; space pauses and resumes, the right arrow
// steps one turn while paused, Esc quits.
type termView struct {
	out      io.Writer
	render   func(frames []json.RawMessage, i int) string
	title    string
	interval time.Duration

	mu     sync.Mutex
	frames []json.RawMessage
	over   bool
	wake   chan struct{}
}

func newTermView(out io.Writer, title string, fps int, render func([]json.RawMessage, int) string) *termView {
	return &termView{out: out, title: title, render: render, interval: time.Second / time.Duration(max(1, fps)), wake: make(chan struct{}, 1)}
}

// add records a frame (from the match's goroutine).
func (v *termView) add(state json.RawMessage) {
	v.mu.Lock()
	v.frames = append(v.frames, state)
	v.mu.Unlock()
	v.poke()
}

// end says that no frame will follow.
func (v *termView) end() {
	v.mu.Lock()
	v.over = true
	v.mu.Unlock()
	v.poke()
}

func (v *termView) poke() {
	select {
	case v.wake <- struct{}{}:
	default:
	}
}

// run shows the frames until the last one was shown after the match ended
// (returns false), or until the user quits (returns true).
func (v *termView) run(ctx context.Context, keys <-chan key) (quit bool) {
	shown, paused := -1, false
	tick := time.NewTicker(v.interval)
	defer tick.Stop()
	for {
		v.mu.Lock()
		n, over := len(v.frames), v.over
		v.mu.Unlock()
		if over && shown == n-1 && !paused {
			return false
		}
		select {
		case k, ok := <-keys:
			if !ok {
				keys = nil
				continue
			}
			switch k {
			case keyQuit:
				return true
			case keySpace:
				paused = !paused
				v.draw(shown, n, paused)
			case keyRight:
				if paused && shown < n-1 {
					shown++
					v.draw(shown, n, paused)
				}
			}
		case <-tick.C:
			if !paused && shown < n-1 {
				shown++
				v.draw(shown, n, paused)
			}
		case <-v.wake:
		case <-ctx.Done():
			return true
		}
	}
}

func (v *termView) draw(i, n int, paused bool) {
	if i < 0 {
		return
	}
	v.mu.Lock()
	frames := v.frames[:n]
	v.mu.Unlock()
	state := "playing"
	if paused {
		state = "paused"
	}
	text := fmt.Sprintf("%s — frame %d/%d, %s (space: pause/resume, →: step, Esc: quit)\n\n%s", v.title, i, n-1, state, v.render(frames, i))
	// Raw mode: lines need a carriage return too.
	io.WriteString(v.out, "\x1b[H\x1b[2J"+strings.ReplaceAll(text, "\n", "\r\n"))
}
