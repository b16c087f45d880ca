package matches

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A match's frames in a file read back as they went in, in batches of
// about followBytes, from any index; the file goes with the match.
func TestFrameLogInAFile(t *testing.T) {
	saved := followBytes
	followBytes = 100
	defer func() { followBytes = saved }()
	dir := t.TempDir()
	l := newFrameLog(dir, "m1")
	if l.file == nil {
		t.Fatal("no file")
	}
	var want []string
	for i := range 50 {
		f := fmt.Sprintf(`{"turn":%d,"state":"%s"}`, i, string(make([]byte, i%7)))
		want = append(want, f)
		l.add([]byte(f))
	}
	for _, from := range []int{0, 1, 17, 49, 50, 60} {
		var got []string
		at := from
		for {
			frames, more, err := l.slice(at)()
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range frames {
				got = append(got, string(f))
			}
			at += len(frames)
			if !more {
				break
			}
			if len(frames) == 0 {
				t.Fatal("more, and nothing read")
			}
		}
		if w := want[min(from, len(want)):]; !slices.Equal(got, w) && !(len(got) == 0 && len(w) == 0) {
			t.Errorf("from %d: %d frames, want %d", from, len(got), len(w))
		}
	}
	frames, more, _ := l.slice(0)()
	if !more || len(frames) > 5 {
		t.Errorf("a batch of %d frames (more %v) past followBytes", len(frames), more)
	}
	name := l.file.Name()
	l.close()
	if _, err := os.Stat(name); !os.IsNotExist(err) {
		t.Errorf("the file of frames stays: %v", err)
	}
	// Without a folder, or one that cannot hold a file: in memory.
	m := newFrameLog(filepath.Join(dir, "no", "such"), "m2")
	m.add(json.RawMessage(`{}`))
	if frames, _, _ := m.slice(0)(); m.file != nil || len(frames) != 1 {
		t.Errorf("in memory: %v frames, file %v", len(frames), m.file)
	}
	// A file that fails gives way to memory with every frame kept.
	f := newFrameLog(dir, "m3")
	f.add([]byte(`{"turn":0}`))
	// Writes fail from now on (as on a full disk); reads work.
	ro, err := os.Open(f.file.Name())
	if err != nil {
		t.Fatal(err)
	}
	f.file.Close()
	f.file = ro
	f.add([]byte(`{"turn":1}`))
	if frames, _, err := f.slice(0)(); err != nil || len(frames) != 2 || string(frames[0]) != `{"turn":0}` || f.file != nil {
		t.Errorf("after the file failed: %q %v", frames, err)
	}
}
