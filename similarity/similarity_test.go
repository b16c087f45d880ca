package similarity

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"
)

// kit reads files of the repository's starter kits.
func kit(t testing.TB, names ...string) []File {
	t.Helper()
	var out []File
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join("..", "botkits", n))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, File{Name: filepath.Base(n), Data: data})
	}
	return out
}

// disguise renames every name a source uses (what its language's lexer
// calls a name), rewrites its comments and changes its spacing: what a
// copier does to hide a copy.
func disguise(t testing.TB, f File) File {
	t.Helper()
	it, err := lexers.Get(Language(f.Name)).Tokenise(nil, string(f.Data))
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	var b strings.Builder
	for tok := it(); tok != chroma.EOF; tok = it() {
		switch v := tok.Value; {
		case tok.Type.InCategory(chroma.Name):
			if _, ok := names[v]; !ok {
				names[v] = fmt.Sprintf("q%d", len(names))
			}
			b.WriteString(names[v])
		case tok.Type.InCategory(chroma.Comment) && !tok.Type.InSubCategory(chroma.CommentPreproc):
			b.WriteString(strings.Repeat("\n", strings.Count(v, "\n")))
		case tok.Type == chroma.Text || tok.Type == chroma.TextWhitespace:
			b.WriteString(strings.ReplaceAll(strings.ReplaceAll(v, " ", "  "), "\n", "\n\n"))
		default:
			b.WriteString(v)
		}
	}
	return File{Name: "renamed_" + f.Name, Data: []byte(b.String())}
}

// Two sources that differ only in names, comments and spacing score as
// near-identical, in Python, Go and C++.
func TestACopyUnderOtherNamesIsFound(t *testing.T) {
	for _, c := range []struct{ file string }{{"python/snake_greedy.py"}, {"go/tanks-hunter/main.go"}, {"cpp/snake/snake_main.cpp"}} {
		orig := kit(t, c.file)[0]
		copied := disguise(t, orig)
		if string(copied.Data) == string(orig.Data) {
			t.Fatalf("%s: the disguise changed nothing", c.file)
		}
		a, b := Fingerprint([]File{orig}), Fingerprint([]File{copied})
		m := Compare(a, b)
		t.Logf("%s: %d and %d fingerprints, %d shared, score %.2f", c.file, len(a), len(b), m.Shared, m.Score)
		if len(a) < 20 || m.Score < 0.9 {
			t.Errorf("%s: a disguised copy scores %.2f (%d of %d/%d fingerprints)", c.file, m.Score, m.Shared, len(a), len(b))
		}
		// The regions cover most of both files, with their own lines.
		if len(m.A) == 0 || m.A[0].File != orig.Name || len(m.B) == 0 || m.B[0].File != copied.Name {
			t.Errorf("%s: regions %v and %v", c.file, m.A, m.B)
		}
	}
}

// The kits' different example bots score low against each other.
func TestDifferentBotsScoreLow(t *testing.T) {
	for _, pair := range [][2]string{
		{"go/tanks-hunter/main.go", "go/snake-greedy/main.go"},
		{"go/pacman-runner/main.go", "go/tanks-hunter/main.go"},
		{"python/snake_greedy.py", "python/pacman_runner.py"},
		{"python/pacman_ghosts.py", "python/snake_greedy.py"},
	} {
		m := Compare(Fingerprint(kit(t, pair[0])), Fingerprint(kit(t, pair[1])))
		t.Logf("%s ~ %s: score %.2f (%d shared)", pair[0], pair[1], m.Score, m.Shared)
		if m.Score > 0.25 {
			t.Errorf("%s and %s score %.2f", pair[0], pair[1], m.Score)
		}
	}
}

// Two bots that each add their own code to the kit's example share the
// kit, which counts for no one: without it they score low; with it they
// would not.
func TestTheKitCountsForNoOne(t *testing.T) {
	base := kit(t, "python/bot.py", "python/tanks.py")
	add := func(extra string) []File {
		files := kit(t, "python/bot.py", "python/tanks.py")
		files[0].Data = append(files[0].Data, []byte(extra)...)
		return files
	}
	alice := add(`
def plan(state, depth):
    best, score = None, -1
    for move in state.moves():
        value = evaluate(state.after(move), depth - 1)
        if value > score:
            best, score = move, value
    return best

def evaluate(state, depth):
    if depth == 0 or state.over():
        return state.points()
    return max(evaluate(state.after(m), depth - 1) for m in state.moves())
`)
	bob := add(`
class Memory:
    def __init__(self):
        self.seen = {}
        self.turns = 0

    def remember(self, enemy, where):
        self.seen.setdefault(enemy, []).append((self.turns, where))
        self.turns += 1

    def guess(self, enemy):
        trail = self.seen.get(enemy, [])
        if len(trail) < 2:
            return None
        (t0, a), (t1, b) = trail[-2], trail[-1]
        return (2 * b[0] - a[0], 2 * b[1] - a[1])
`)
	kitFP := Fingerprint(base)
	whole := Compare(Fingerprint(alice), Fingerprint(bob))
	own := Compare(Fingerprint(alice).Without(kitFP), Fingerprint(bob).Without(kitFP))
	t.Logf("with the kit %.2f (%d shared), without it %.2f (%d shared)", whole.Score, whole.Shared, own.Score, own.Shared)
	if whole.Score < 0.5 {
		t.Errorf("with the kit they share only %.2f: the test shows nothing", whole.Score)
	}
	if own.Score > 0.25 {
		t.Errorf("without the kit they score %.2f", own.Score)
	}
	// And one who copies bob's addition, names changed, is found.
	bobs := string(bob[0].Data[len(base[0].Data):])
	carol := add(strings.NewReplacer("Memory", "Recall", "seen", "known", "remember", "note", "guess", "predict", "trail", "path").Replace(bobs))
	if m := Compare(Fingerprint(carol).Without(kitFP), Fingerprint(bob).Without(kitFP)); m.Score < 0.9 {
		t.Errorf("a copy of bob's addition scores %.2f", m.Score)
	}
}

// A file in no compared language, too short or too big gives no
// fingerprint.
func TestWhatIsNotCompared(t *testing.T) {
	if fp := Fingerprint([]File{{Name: "README.md", Data: []byte("# a long readme, with words and more words and more")}, {Name: "a.py", Data: []byte("x = 1")}}); len(fp) != 0 {
		t.Errorf("%d fingerprints", len(fp))
	}
	huge := bytes.Repeat([]byte("x = [1, 2, 3]  # a line\n"), MaxFileBytes/20)
	if fp := Fingerprint([]File{{Name: "table.py", Data: huge}}); len(huge) <= MaxFileBytes || len(fp) != 0 {
		t.Errorf("a file of %d bytes gave %d fingerprints", len(huge), len(fp))
	}
	if m := Compare(Fingerprints{}, Fingerprint(kit(t, "python/snake_greedy.py"))); m.Score != 0 || m.Shared != 0 {
		t.Errorf("against nothing: %+v", m)
	}
}

// A class's sources: each student's own bot on the kit, and one pair
// that copied, disguised. The report puts the copy first.
func TestTheReportPutsTheCopyFirst(t *testing.T) {
	base := kit(t, "python/bot.py", "python/tanks.py")
	var sources []Source
	for i, f := range kit(t, "python/snake_greedy.py", "python/pacman_runner.py", "python/pacman_ghosts.py", "go/tanks-hunter/main.go", "go/snake-greedy/main.go") {
		sources = append(sources, Source{ID: fmt.Sprintf("s%d/bot:v1", i), Files: append(kit(t, "python/bot.py", "python/tanks.py"), f)})
	}
	copied := disguise(t, kit(t, "go/tanks-hunter/main.go")[0])
	sources = append(sources, Source{ID: "copier/bot:v1", Files: []File{copied}})
	pairs := Report(sources, base)
	if len(pairs) == 0 || pairs[0].A != "s3/bot:v1" || pairs[0].B != "copier/bot:v1" || pairs[0].Score < 0.9 {
		t.Fatalf("the report's first pair: %+v", pairs[:min(2, len(pairs))])
	}
	for _, p := range pairs[1:] {
		if p.Score > 0.3 {
			t.Errorf("%s ~ %s scores %.2f", p.A, p.B, p.Score)
		}
	}
}

// BenchmarkReport compares a class of 100 sources of a few hundred lines
// each (the kits' bots, each disguised anew, on the kit).
func BenchmarkReport(b *testing.B) {
	bots := kit(b, "python/snake_greedy.py", "python/pacman_runner.py", "python/pacman_ghosts.py", "go/tanks-hunter/main.go", "go/snake-greedy/main.go", "go/pacman-runner/main.go", "cpp/snake/snake_main.cpp")
	base := kit(b, "python/bot.py", "python/tanks.py")
	var sources []Source
	for i := range 100 {
		f := disguise(b, bots[i%len(bots)])
		f.Data = append(f.Data, []byte(fmt.Sprintf("\n# %d\n", i))...)
		sources = append(sources, Source{ID: fmt.Sprintf("s%d/bot:v1", i), Files: append(kit(b, "python/bot.py", "python/tanks.py"), f)})
	}
	for b.Loop() {
		Report(sources, base)
	}
}
