package framing

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

func split(t *testing.T, s *Splitter, chunks ...string) (msgs []string, err error) {
	t.Helper()
	for _, c := range chunks {
		s.Write([]byte(c))
	}
	for {
		msg, ok, err := s.Next()
		if err != nil || !ok {
			return msgs, err
		}
		msgs = append(msgs, string(msg))
	}
}

func TestLines(t *testing.T) {
	s := NewSplitter(Lines, 16)
	msgs, err := split(t, s, "[]\n[{", "\"a\":1}]\n\n", "partial")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"[]", `[{"a":1}]`, ""}; strings.Join(msgs, "|") != strings.Join(want, "|") {
		t.Errorf("messages = %q, want %q", msgs, want)
	}
	if msgs, _ := split(t, s, " end\n"); len(msgs) != 1 || msgs[0] != "partial end" {
		t.Errorf("the partial line did not complete: %q", msgs)
	}
}

func TestZeroFramingIsLines(t *testing.T) {
	if msgs, err := split(t, NewSplitter("", 8), "a\nb\n"); err != nil || strings.Join(msgs, "|") != "a|b" {
		t.Errorf("messages = %q, %v", msgs, err)
	}
}

func TestLineLimit(t *testing.T) {
	tests := []struct {
		name   string
		chunks []string
	}{
		{"one long line with its newline", []string{strings.Repeat("x", 17) + "\n"}},
		{"a long line still coming", []string{strings.Repeat("x", 10), strings.Repeat("x", 10)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewSplitter(Lines, 16)
			if _, err := split(t, s, tt.chunks...); !errors.Is(err, ErrTooLong) {
				t.Fatalf("err = %v, want ErrTooLong", err)
			}
			// Whatever follows is discarded and memory stays bounded; the
			// error stays.
			msgs, err := split(t, s, strings.Repeat("y", 1000)+"\n[]\n")
			if len(msgs) != 0 || !errors.Is(err, ErrTooLong) || s.Buffered() != 0 {
				t.Errorf("after the limit: %q, %v, %d bytes held", msgs, err, s.Buffered())
			}
		})
	}
	// Exactly at the limit is fine.
	if msgs, err := split(t, NewSplitter(Lines, 16), strings.Repeat("z", 16)+"\n"); err != nil || len(msgs) != 1 {
		t.Errorf("a 16-byte line at a 16-byte limit: %q, %v", msgs, err)
	}
}

func lp(s string) string {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], uint32(len(s)))
	return string(b[:]) + s
}

func TestLengthPrefixed(t *testing.T) {
	s := NewSplitter(LengthPrefixed, 32)
	all := lp(`{"role":0}`) + lp("") + lp("{\"x\":\"line\nbreak\"}")
	// Byte by byte: framing survives any split.
	var msgs []string
	for i := 0; i < len(all); i++ {
		got, err := split(t, s, all[i:i+1])
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, got...)
	}
	if want := []string{`{"role":0}`, "", `{"x":"line` + "\n" + `break"}`}; strings.Join(msgs, "|") != strings.Join(want, "|") {
		t.Errorf("messages = %q, want %q", msgs, want)
	}
	if _, err := split(t, s, lp(strings.Repeat("a", 33))); !errors.Is(err, ErrTooLong) {
		t.Errorf("a 33-byte message at a 32-byte limit: %v", err)
	}
}

// A logic's messages carry a target after their length: the message cut
// keeps it in front of the data; the limit is the data's.
func TestTargeted(t *testing.T) {
	tm := func(target int32, data string) string {
		var h [8]byte
		binary.BigEndian.PutUint32(h[:], uint32(len(data)))
		binary.BigEndian.PutUint32(h[4:], uint32(target))
		return string(h[:]) + data
	}
	s := NewSplitter(Targeted, 8)
	var msgs []string
	all := tm(-1, `{"a":1}`) + tm(1, "") + tm(0, "12345678")
	for i := 0; i < len(all); i++ {
		got, err := split(t, s, all[i:i+1])
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, got...)
	}
	want := []string{"\xff\xff\xff\xff{\"a\":1}", "\x00\x00\x00\x01", "\x00\x00\x00\x0012345678"}
	if strings.Join(msgs, "|") != strings.Join(want, "|") {
		t.Errorf("messages = %q, want %q", msgs, want)
	}
	if _, err := split(t, s, tm(0, "123456789")); !errors.Is(err, ErrTooLong) {
		t.Errorf("a 9-byte message at an 8-byte limit: %v", err)
	}
}

func TestLargeStreamDoesNotPinMemory(t *testing.T) {
	s := NewSplitter(Lines, 1<<10)
	line := strings.Repeat("x", 1000) + "\n"
	for i := 0; i < 1000; i++ {
		if msgs, err := split(t, s, line); err != nil || len(msgs) != 1 {
			t.Fatalf("line %d: %d messages, %v", i, len(msgs), err)
		}
	}
	if c := cap(s.buf); c > 2*(1<<10)+64<<10 {
		t.Errorf("the buffer holds %d bytes of capacity after the stream", c)
	}
}
