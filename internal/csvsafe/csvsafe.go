// Package csvsafe writes CSV that a spreadsheet opens without running
// anything in it. A text cell (a name, an email, a team's, a bot's or a
// contest's name, a note, a reason: anything a person chose) that
// starts as a formula does (=, +, -, @, a tab or a carriage return,
// or their full-width forms) gets a single quote before it, OWASP's
// rule against CSV injection; numbers the program wrote itself go out
// as they are (a rating of -3.5 stays -3.5).
//
// Every CSV the project writes goes through a Writer, whose cells are
// typed as text or number; a test fails on a csv.NewWriter anywhere
// else.
package csvsafe

import (
	"encoding/csv"
	"io"
	"strconv"
	"strings"
	"time"
)

// Neutralise is s safe as a CSV cell of text: s itself, or s after a
// single quote when a spreadsheet would read it as a formula.
func Neutralise(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '=', '+', '-', '@', '\t', '\r':
		return "'" + s
	}
	// The full-width forms, which some spreadsheets take for the
	// ASCII ones.
	for _, p := range []string{"＝", "＋", "－", "＠"} {
		if strings.HasPrefix(s, p) {
			return "'" + s
		}
	}
	return s
}

// A Cell is one field of a row: text, neutralised, or a number (a
// time, a boolean) the program wrote.
type Cell struct{ v string }

// None is an empty cell.
var None Cell

// Text is a cell of text that came from a person, neutralised.
func Text(s string) Cell { return Cell{Neutralise(s)} }

// Integer are the integer types Int takes.
type Integer interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

// Int is a cell of an integer, in decimal.
func Int[T Integer](n T) Cell {
	if n < 0 {
		return Cell{strconv.FormatInt(int64(n), 10)}
	}
	return Cell{strconv.FormatUint(uint64(n), 10)}
}

// Float is a cell of x as strconv.FormatFloat(x, format, prec, 64)
// writes it.
func Float(x float64, format byte, prec int) Cell {
	return Cell{strconv.FormatFloat(x, format, prec, 64)}
}

// Bool is a cell of true or false.
func Bool(b bool) Cell { return Cell{strconv.FormatBool(b)} }

// Time is a cell of t in layout (a layout of package time's, not a
// person's).
func Time(t time.Time, layout string) Cell { return Cell{t.Format(layout)} }

// A Writer writes rows of cells as CSV.
type Writer struct{ w *csv.Writer }

// NewWriter is a Writer to w.
func NewWriter(w io.Writer) *Writer { return &Writer{csv.NewWriter(w)} }

// Header writes a row of column names, as text (a column may be named
// after something a person chose, as a contest's gates are).
func (w *Writer) Header(names ...string) error {
	row := make([]string, len(names))
	for i, n := range names {
		row[i] = Neutralise(n)
	}
	return w.w.Write(row)
}

// Write writes a row.
func (w *Writer) Write(cells ...Cell) error {
	row := make([]string, len(cells))
	for i, c := range cells {
		row[i] = c.v
	}
	return w.w.Write(row)
}

// Flush writes what is buffered to the underlying writer.
func (w *Writer) Flush() { w.w.Flush() }

// Error is the first error of a Write or Flush.
func (w *Writer) Error() error { return w.w.Error() }
