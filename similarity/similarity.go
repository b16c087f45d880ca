// Package similarity says which bots' sources look copied, as MOSS does:
// each file is cut into tokens by a lexer of its language (chroma's),
// comments and whitespace dropped, names and literals made alike; the
// k-grams of those tokens are hashed and winnowed (Schleimer, Wilkerson
// and Aiken, "Winnowing: Local Algorithms for Document Fingerprinting",
// SIGMOD 2003): in every window of w hashes in a row the least is kept,
// which guarantees that any run of w+k-1 tokens two sources share is
// found. What every source starts from (a starter kit) is a base whose
// fingerprints count for no one. A score is a reason to look, never a
// verdict.
package similarity

import (
	"cmp"
	"hash/fnv"
	"path"
	"slices"
	"strings"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"
)

// K and W are the k-gram's length, in tokens, and the winnowing window:
// a shared run of W+K-1 = 15 tokens (a line or two of code) is always
// found; shorter ones may be.
const (
	K = 12
	W = 4
)

// MaxFileBytes bounds a source file compared: a bigger one (generated
// tables, a vendored library) is left out, and a hostile upload cannot
// keep a lexer busy for minutes.
const MaxFileBytes = 1 << 20

// File is a source file: its path in the upload and its content.
type File struct {
	Name string
	Data []byte
}

// Language is the lexer a file is read with: by its name's extension,
// for the kits' languages ("" for a file that is not compared).
func Language(name string) string {
	switch strings.ToLower(path.Ext(name)) {
	case ".go":
		return "go"
	case ".py":
		return "python"
	case ".c", ".h":
		return "c"
	case ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".hxx":
		return "c++"
	case ".js", ".mjs", ".cjs":
		return "javascript"
	}
	return ""
}

// token is a normalized token and the line it starts on (from 1).
type token struct {
	text string
	line int
}

// tokens cuts a file into normalized tokens: comments and whitespace
// dropped, every name "N", every string "S", every number "0", other
// literals "L"; keywords, operators and punctuation as they are.
func tokens(f File) []token {
	lang := Language(f.Name)
	if lang == "" || len(f.Data) > MaxFileBytes {
		return nil
	}
	lexer := lexers.Get(lang)
	if lexer == nil {
		return nil
	}
	it, err := chroma.Coalesce(lexer).Tokenise(nil, string(f.Data))
	if err != nil {
		return nil
	}
	var out []token
	line := 1
	for t := it(); t != chroma.EOF; t = it() {
		at := line
		line += strings.Count(t.Value, "\n")
		var text string
		switch tt := t.Type; {
		case tt.InCategory(chroma.Comment), tt == chroma.Text, tt == chroma.TextWhitespace:
			continue
		case tt.InCategory(chroma.Name):
			text = "N"
		case tt.InSubCategory(chroma.LiteralString):
			text = "S"
		case tt.InSubCategory(chroma.LiteralNumber):
			text = "0"
		case tt.InCategory(chroma.Literal):
			text = "L"
		default:
			text = strings.TrimSpace(t.Value)
		}
		if text == "" {
			continue
		}
		// A string the lexer cut in pieces is one string.
		if text == "S" && len(out) > 0 && out[len(out)-1].text == "S" {
			continue
		}
		out = append(out, token{text: text, line: at})
	}
	return out
}

// Span is a run of lines of a file, from First to Last (from 1).
type Span struct {
	File  string `json:"file"`
	First int    `json:"first"`
	Last  int    `json:"last"`
}

// Fingerprints are a source's winnowed k-gram hashes, each with where it
// is (one place per hash: the first).
type Fingerprints map[uint64]Span

// Fingerprint winnows the files of one source.
func Fingerprint(files []File) Fingerprints {
	fp := Fingerprints{}
	for _, f := range files {
		toks := tokens(f)
		if len(toks) < K {
			continue
		}
		hashes := make([]uint64, len(toks)-K+1)
		for i := range hashes {
			h := fnv.New64a()
			for _, t := range toks[i : i+K] {
				h.Write([]byte(t.text))
				h.Write([]byte{0})
			}
			hashes[i] = h.Sum64()
		}
		keep := func(i int) {
			if _, ok := fp[hashes[i]]; !ok {
				fp[hashes[i]] = Span{File: f.Name, First: toks[i].line, Last: toks[i+K-1].line}
			}
		}
		if len(hashes) < W {
			keep(slices.Index(hashes, slices.Min(hashes)))
			continue
		}
		last := -1
		for start := 0; start+W <= len(hashes); start++ {
			// The window's least hash, the rightmost of equals.
			least := start
			for i := start + 1; i < start+W; i++ {
				if hashes[i] <= hashes[least] {
					least = i
				}
			}
			if least != last {
				keep(least)
				last = least
			}
		}
	}
	return fp
}

// Without returns the fingerprints that are not in base (a starter kit's).
func (fp Fingerprints) Without(base Fingerprints) Fingerprints {
	out := Fingerprints{}
	for h, s := range fp {
		if _, common := base[h]; !common {
			out[h] = s
		}
	}
	return out
}

// Match is how much two sources share.
type Match struct {
	// Shared counts the fingerprints both have; Score is Shared over the
	// smaller source's count (1: one is wholly in the other).
	Shared int     `json:"shared"`
	Score  float64 `json:"score"`
	// A and B are the regions of each source the shared fingerprints
	// cover, lines merged, by file and line.
	A, B []Span `json:"-"`
}

// Compare says how much a and b share.
func Compare(a, b Fingerprints) Match {
	var m Match
	for h, sa := range a {
		if sb, ok := b[h]; ok {
			m.Shared++
			m.A, m.B = append(m.A, sa), append(m.B, sb)
		}
	}
	if n := min(len(a), len(b)); n > 0 {
		m.Score = float64(m.Shared) / float64(n)
	}
	m.A, m.B = merge(m.A), merge(m.B)
	return m
}

// merge sorts spans by file and line and joins those that overlap or
// touch.
func merge(spans []Span) []Span {
	slices.SortFunc(spans, func(x, y Span) int {
		if c := strings.Compare(x.File, y.File); c != 0 {
			return c
		}
		return x.First - y.First
	})
	var out []Span
	for _, s := range spans {
		if n := len(out); n > 0 && out[n-1].File == s.File && s.First <= out[n-1].Last+1 {
			out[n-1].Last = max(out[n-1].Last, s.Last)
			continue
		}
		out = append(out, s)
	}
	return out
}

// Source is one version's sources: ID names it in a report (a reference,
// repository:tag).
type Source struct {
	ID    string
	Files []File
}

// Pair is two sources and what they share.
type Pair struct {
	A, B string
	Match
}

// Common is how many sources a fingerprint may appear in before it is
// taken for an idiom or what they all start from, not a copy: half of
// them, and at least ten (MOSS's -m): a few bots that share something
// are what the report is for.
func Common(sources int) int { return max(10, sources/2) }

// Report compares every two sources, less what base (the starter kits)
// holds and the idioms most of them share, and returns the pairs that
// share anything, the most similar first (on a tie, the most shared).
func Report(sources []Source, base []File) []Pair {
	kit := Fingerprint(base)
	fps := make([]Fingerprints, len(sources))
	holders := map[uint64][]int{}
	for i, s := range sources {
		fps[i] = Fingerprint(s.Files).Without(kit)
		for h := range fps[i] {
			holders[h] = append(holders[h], i)
		}
	}
	common := Common(len(sources))
	for h, who := range holders {
		if len(who) > common {
			for _, i := range who {
				delete(fps[i], h)
			}
			delete(holders, h)
		}
	}
	// Only pairs that share a fingerprint are compared.
	shared := map[[2]int]bool{}
	for _, who := range holders {
		for x := 0; x < len(who); x++ {
			for y := x + 1; y < len(who); y++ {
				shared[[2]int{who[x], who[y]}] = true
			}
		}
	}
	pairs := make([]Pair, 0, len(shared))
	for p := range shared {
		pairs = append(pairs, Pair{A: sources[p[0]].ID, B: sources[p[1]].ID, Match: Compare(fps[p[0]], fps[p[1]])})
	}
	slices.SortFunc(pairs, func(x, y Pair) int {
		return mostAlikeFirst(x.Score, y.Score, x.Shared, y.Shared, x.A+" "+x.B, y.A+" "+y.B)
	})
	return pairs
}

// mostAlikeFirst orders pairs: the higher score first, then the more
// shared, then by name.
func mostAlikeFirst(xScore, yScore float64, xShared, yShared int, xName, yName string) int {
	switch {
	case xScore != yScore:
		return cmp.Compare(yScore, xScore)
	case xShared != yShared:
		return yShared - xShared
	}
	return strings.Compare(xName, yName)
}
