package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"arena/internal/testsupport/dockertest"
)

// figure is a measured quantity as the docs write one: a number and a
// unit of time, size, rate or ratio.
var figure = regexp.MustCompile(`\d[\d.,]*\s?(µs|ms|s|min|minutes|MiB|KiB|GiB|MB|GB|matches/s|×|%)(\b|[^\w]|$)`)

// command is a command in backticks that measures something.
var command = regexp.MustCompile("`(go test|make |arena |bin/arena |time |docker|bash |ARENA_RUNTIME=)[^`]*`")

// measuredWord marks prose that reports a measurement: measured, took,
// or where (on this machine, a 2-core machine).
var measuredWord = regexp.MustCompile(`(?i)\bmeasured\b|\btook\b|\bmachine\b`)

// block is a paragraph, a list item or a table row of a Markdown file.
type block struct {
	text  string
	line  int
	table int // the index of the table it is a row of; -1 when none
}

// blocks splits a Markdown file; intros are each table's header row and
// the paragraph before it.
func blocks(md string) (bs []block, intros map[int]string) {
	intros = map[int]string{}
	var cur []string
	start, table, inTable, prev := 0, -1, false, ""
	flush := func() {
		if len(cur) > 0 {
			prev = strings.Join(cur, "\n")
			bs = append(bs, block{text: prev, line: start, table: -1})
		}
		cur = nil
	}
	inCode := false
	for i, l := range strings.Split(md, "\n") {
		switch t := strings.TrimSpace(l); {
		case strings.HasPrefix(t, "```"):
			inCode = !inCode
			flush()
		case inCode:
		case strings.HasPrefix(t, "|"):
			if !inTable {
				flush()
				table++
				inTable = true
				intros[table] = prev + "\n" + t
				continue
			}
			bs = append(bs, block{text: t, line: i + 1, table: table})
		case t == "":
			flush()
			inTable = false
		case strings.HasPrefix(t, "- ") || strings.HasPrefix(t, "#"):
			flush()
			inTable = false
			cur, start = []string{t}, i+1
		default:
			inTable = false
			if len(cur) == 0 {
				start = i + 1
			}
			cur = append(cur, t)
		}
	}
	flush()
	return bs, intros
}

// Every figure the docs report as measured names the command that
// measures it: in its own paragraph, list item or table row, or, for a
// table whose header says "measured", in the paragraph that introduces
// the table.
func TestEveryMeasuredFigureNamesItsCommand(t *testing.T) {
	root := dockertest.Root()
	files, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	files = append(files, filepath.Join(root, "README.md"), filepath.Join(root, "SECURITY.md"))
	checked := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		bs, intros := blocks(string(data))
		for _, b := range bs {
			if !figure.MatchString(b.text) {
				continue
			}
			measuredTable := b.table >= 0 && strings.Contains(strings.ToLower(intros[b.table]), "| measured")
			if !measuredTable && !measuredWord.MatchString(b.text) {
				continue
			}
			checked++
			if command.MatchString(b.text) || measuredTable && command.MatchString(intros[b.table]) {
				continue
			}
			rel, _ := filepath.Rel(root, f)
			t.Errorf("%s:%d: a measured figure names no command that measures it:\n%.300s", rel, b.line, b.text)
		}
	}
	t.Logf("%d measured blocks checked", checked)
	if checked < 10 {
		t.Errorf("only %d measured figures found: the check no longer reads the docs", checked)
	}
}
