package draw

import (
	"bytes"
	"testing"
)

func TestFlushWritesOneLine(t *testing.T) {
	var buf bytes.Buffer
	Out = &buf
	Flush()
	if buf.Len() != 0 {
		t.Errorf("nothing drawn, yet %q", buf.String())
	}
	Circle(3, 4, "", "me")
	Line(3, 4, 7, 4, "#e33", "")
	Cell(1, 2, "gold", "")
	Text(0, 0, "hello", "")
	Flush()
	want := `#arena {"draw":[{"circle":[3,4],"text":"me"},{"color":"#e33","line":[[3,4],[7,4]]},{"cell":[1,2],"color":"gold"},{"at":[0,0],"text":"hello"}]}` + "\n"
	if buf.String() != want {
		t.Errorf("got  %s\nwant %s", buf.String(), want)
	}
}
