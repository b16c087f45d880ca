package sourcebuild

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"arena/botkits"
)

// localSteps runs a kit's build step as the sandbox does (its script on
// sh, the upload as one line of base64 on its stdin, BOT=main, the binary
// as one line on its stdout), but in a shell of this machine, with its
// tools: /tmp rebased to a folder of the test's, and bin, when set, first
// on the PATH (a stand-in g++). The Go build cache is this machine's.
type localSteps struct {
	t   *testing.T
	bin string
}

func (l localSteps) Run(ctx context.Context, _ string, step Step, main string, src []byte, log io.Writer) ([]byte, error) {
	dir := l.t.TempDir()
	// The Go tool makes its module cache read-only; the folder must go.
	l.t.Cleanup(func() {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				os.Chmod(p, 0o755)
			}
			return nil
		})
	})
	script := strings.ReplaceAll(step.Script, "/tmp", dir)
	if out, err := exec.Command("go", "env", "GOCACHE").Output(); err == nil {
		script = strings.ReplaceAll(script, "GOCACHE="+dir+"/cache", "GOCACHE="+strings.TrimSpace(string(out)))
	}
	path := os.Getenv("PATH")
	if l.bin != "" {
		path = l.bin + string(os.PathListSeparator) + path
	}
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", script)
	cmd.Env = []string{"PATH=" + path, "BOT=" + main, "GOPROXY=off"}
	cmd.Stdin = strings.NewReader(base64.StdEncoding.EncodeToString(src) + "\n")
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, log
	if err := cmd.Run(); err != nil {
		return nil, errors.Join(ErrBuild, err)
	}
	return base64.StdEncoding.DecodeString(strings.TrimSpace(stdout.String()))
}

// fakeGpp is a folder holding a g++ that writes its arguments, one a
// line, as the binary it is asked for.
func fakeGpp(t *testing.T) string {
	dir := t.TempDir()
	script := `#!/bin/sh
out=
prev=
for a in "$@"; do
  if [ "$prev" = "-o" ]; then out=$a; fi
  prev=$a
done
printf '%s\n' "$@" >"$out"
`
	if err := os.WriteFile(filepath.Join(dir, "g++"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// sourceOf is a starter's files as an upload of them reads.
func sourceOf(t *testing.T, files []botkits.File) Source {
	t.Helper()
	var in []File
	for _, f := range files {
		in = append(in, File{Name: f.Name, Data: f.Data})
	}
	var buf bytes.Buffer
	if err := TarGz(in, &buf); err != nil {
		t.Fatal(err)
	}
	s, err := Read(buf.Bytes(), DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The C++ step compiles every .cpp and .c file at the top of the upload
// and the main source when it is in a folder, once each, with -I., each
// as ./PATH whatever its name: the starters of the three games, and
// uploads of other shapes. (The step runs here, its g++ a stand-in that
// writes back its arguments.)
func TestCppStepCompiles(t *testing.T) {
	cpp, _ := FindKit("cpp", Source{})
	b := &Builder{Steps: localSteps{t: t, bin: fakeGpp(t)}}
	compiled := func(src Source, main string) ([]string, error) {
		t.Helper()
		main, err := cpp.mainOf(src, main)
		if err != nil {
			return nil, err
		}
		var log strings.Builder
		bin, err := b.step(t.Context(), Request{ID: "t", Source: src}, cpp, main, &log)
		if err != nil {
			return nil, errors.Join(err, errors.New(log.String()))
		}
		args := strings.Split(strings.TrimSuffix(string(bin), "\n"), "\n")
		flags := []string{"-std=c++17", "-O2", "-static", "-I.", "-o"}
		if len(args) < len(flags)+1 || !slices.Equal(args[:len(flags)], flags) || !strings.HasSuffix(args[len(flags)], "/out/bot") {
			t.Fatalf("g++ %q, want its flags %q and the output first", args, flags)
		}
		return args[len(flags)+1:], nil
	}
	for _, game := range []string{"tanks", "snake", "pacman"} {
		st, err := botkits.StarterOf("cpp", game)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string][]string{"tanks": {"./bot.cpp"}, "snake": {"./my_algo.c", "./snake/snake_main.cpp"}, "pacman": {"./pacman/runner.cpp"}}[game]
		if got, err := compiled(sourceOf(t, st.Files), st.Main); err != nil || !slices.Equal(got, want) {
			t.Errorf("the %s starter: g++ compiles %q (%v), want %q", game, got, err, want)
		}
	}
	src := func(names ...string) Source {
		var s Source
		for _, n := range names {
			s.Files = append(s.Files, File{Name: n, Data: []byte("int x;")})
		}
		return s
	}
	for _, c := range []struct {
		files []string
		main  string
		want  []string
	}{
		{[]string{"bot.cpp", "util.cpp", "lib.c", "lib.h"}, "", []string{"./bot.cpp", "./util.cpp", "./lib.c"}},
		{[]string{"bot.cpp", "util.cpp"}, "bot.cpp", []string{"./bot.cpp", "./util.cpp"}},
		{[]string{"my bot.cpp", "a'b\".c"}, "", []string{"./my bot.cpp", "./a'b\".c"}},
		{[]string{"algo.c", "src/main.cpp", "src/other.cpp"}, "src/main.cpp", []string{"./algo.c", "./src/main.cpp"}},
		{[]string{"src/main.cpp", "src/$(id).h"}, "src/main.cpp", []string{"./src/main.cpp"}},
	} {
		if got, err := compiled(src(c.files...), c.main); err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%q, bot %q: g++ compiles %q (%v), want %q", c.files, c.main, got, err, c.want)
		}
	}
	// What it refuses before the sandbox, saying why.
	for _, c := range []struct {
		files []string
		main  string
		want  string
	}{
		{[]string{"pacman/runner.cpp", "json.h"}, "", "no .cpp or .c file at the upload's top: name the bot's main source"},
		{[]string{"bot.cpp"}, "bot.h", `bot "bot.h": the main source of a C++ bot is a .cpp or .c file`},
		{[]string{"bot.cpp"}, "snake/main.cpp", "no snake/main.cpp in the upload"},
	} {
		if _, err := cpp.mainOf(src(c.files...), c.main); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q, bot %q: %v, want %q", c.files, c.main, err, c.want)
		}
	}
}

// Every kit builds every game's starter through its recipe, the kit told
// from the starter's files, with the starter's main: Go's go build and
// C++'s g++ run here as their step would in the sandbox (this machine's
// toolchains, offline), Python's and JavaScript's files are the bot; the
// image's entrypoint, run here with its environment, starts the bot,
// which exits 0 when its input ends (a module missing would fail it).
// TestSubmitEachKit (cmd/arena) builds them in the sandbox.
func TestStartersBuildWithTheirKitsRecipes(t *testing.T) {
	for _, tool := range []string{"g++", "go", "python3", "node", "tar", "base64"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed to build and run the starters here: %v", tool, err)
		}
	}
	for _, st := range botkits.Starters() {
		t.Run(st.Kit+"/"+st.Game, func(t *testing.T) {
			t.Parallel()
			src := sourceOf(t, st.Files)
			if len(src.Files) != len(st.Files) || !src.Has(st.Files[0].Name) {
				t.Fatalf("the starter's upload reads as %d files (%s…): stepped into a folder?", len(src.Files), src.Files[0].Name)
			}
			if kit, err := FindKit("", src); err != nil || kit.Name != st.Kit {
				t.Fatalf("its files are told the %q kit's (%v)", kit.Name, err)
			}
			b := &Builder{Steps: localSteps{t: t}, Base: func(context.Context, string) (v1.Image, error) { return empty.Image, nil }}
			var log strings.Builder
			img, err := b.Build(t.Context(), Request{ID: "t", Source: src, Game: st.Game, Main: st.Main}, &log)
			if err != nil {
				t.Fatalf("the build: %v\n%s", err, log.String())
			}
			if !strings.Contains(log.String(), "kit "+st.Kit+", ") || !strings.Contains(log.String(), "bot "+st.Main+"\n") {
				t.Errorf("the build's log:\n%s", log.String())
			}
			runImage(t, img, st)
		})
	}
}

// runImage writes the image's files into a folder and runs its
// entrypoint there, with its environment, paths under /bot rebased to
// the folder: the bot, its input ended at once, exits 0.
func runImage(t *testing.T, img v1.Image, st botkits.Starter) {
	t.Helper()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Config.Labels[GameLabel] != st.Game {
		t.Errorf("the image's labels: %v", cf.Config.Labels)
	}
	dir := t.TempDir()
	tr := tar.NewReader(mutate.Extract(img))
	files := 0
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		if h.Typeflag == tar.TypeDir {
			os.MkdirAll(p, 0o755)
			continue
		}
		data, _ := io.ReadAll(tr)
		if err := os.WriteFile(p, data, os.FileMode(h.Mode)); err != nil {
			t.Fatal(err)
		}
		files++
	}
	want := len(st.Files) // the files are the bot
	if st.Kit == "go" || st.Kit == "cpp" {
		want = 1 // the binary
	}
	if files != want {
		t.Errorf("the image holds %d files, want %d", files, want)
	}
	rebase := func(s string) string {
		if s == "/bot" || strings.HasPrefix(s, "/bot/") {
			return dir + s
		}
		return s
	}
	args := slices.Clone(cf.Config.Entrypoint)
	args[0] = rebase(args[0])
	env := []string{"PATH=" + os.Getenv("PATH"), "ARENA_BOT_ID=me"}
	for _, kv := range cf.Config.Env {
		k, v, _ := strings.Cut(kv, "=")
		env = append(env, k+"="+rebase(v))
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir, cmd.Env = dir, env
	if cf.Config.WorkingDir != "" {
		cmd.Dir = rebase(cf.Config.WorkingDir)
	}
	cmd.Stdin = strings.NewReader("")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("%q (env %q), its input ended: %v\n%s", cf.Config.Entrypoint, cf.Config.Env, err, out)
	}
}
