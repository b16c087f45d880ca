// Command tankbot is a Tanks bot for tests: it answers [] every turn and
// misbehaves on request. Its argument is a comma-separated list of
// behaviours, e.g. "delay=60ms" or "exit-at=5". Turns count from 1.
//
//	delay=D            wait D before every answer (sleeping: no CPU time)
//	cpu=D              compute for D of CPU time before every answer (STALL lines
//	                   on stderr when the machine held its CPU; see burn)
//	first-delay=D      wait D before the first answer (a slow start)
//	garbage-at=N       answer turn N with a line that is not JSON
//	invalid-utf8-at=N  answer turn N with bytes that are not UTF-8
//	exit-at=N          exit with code 3 at turn N
//	hang-at=N          stop answering at turn N (still running)
//	close-stdout-at=N  close stdout at turn N and keep running
//	huge-line-at=N     answer turn N with a 200 MB line
//	oom-at=N           allocate memory until killed, at turn N
//	hold-mib=N         allocate and touch N MiB before the first answer, keep it, answer as usual
//	fork-bomb-at=N     start processes until refused, at turn N, then go on
//	fill-tmp-at=N      write /tmp until refused, at turn N, then go on
//	write-root-at=N    try to write to / at turn N, then go on
//	stderr-flood       write 1 MiB to stderr every turn
//	bad-annotations    write annotation lines (#arena …) that do not read, or
//	                   draw nothing sane, every turn
//	max-answer=N       answer an N-byte valid answer every turn ("[", spaces, "]")
//	drip-at=N          at turn N, write one byte a millisecond, never a newline, forever
//	spin               keep one CPU busy all the time
//	no-read            never read stdin
//	probe              report the sandbox as seen from inside (sandbox/probe), on stderr, at turn 1
//	fill-everywhere-at=N  at turn N, write up to 64 MiB into every directory it can write to (FILL lines on stderr)
//	spawn              start a child (in a session of its own, sleeping) before anything else
//	inotify-hog        hold as many inotify instances as its user may have (INOTIFY line at turn 1)
//	inotify-check      open and close an inotify instance every turn (INOTIFY failed: … on stderr if refused)
//	sleep              do nothing forever (the fork bomb's children)
//	hop                start a helper that never stays at one pid: it computes
//	                   ~0.2 ms, starts its successor (fork and exec, Go's
//	                   clone(CLONE_VFORK)) and exits, forever, while the bot
//	                   answers at once (it reaps the helpers)
//	hopper             one helper of hop
//	find-self          find its own tank by the name ARENA_TEST_SELF holds (its
//	                   image's name, baked into the image), as the original
//	                   TankFight bots find theirs by their image's name; exit 3
//	                   ("no tank of mine") if no tank has that UserId
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"arena/sandbox/probe"
)

func main() {
	opts := map[string]string{}
	if len(os.Args) > 1 {
		for _, kv := range strings.Split(os.Args[1], ",") {
			k, v, _ := strings.Cut(kv, "=")
			opts[k] = v
		}
	}
	at := func(key string) int {
		n, err := strconv.Atoi(opts[key])
		if err != nil {
			return -1
		}
		return n
	}
	dur := func(key string) time.Duration {
		d, _ := time.ParseDuration(opts[key])
		return d
	}
	if _, ok := opts["spawn"]; ok {
		child := exec.Command("/proc/self/exe", "sleep")
		child.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		child.Start()
	}
	if _, ok := opts["spin"]; ok {
		go func() {
			for {
			}
		}()
	}
	if _, ok := opts["hopper"]; ok {
		burn(200 * time.Microsecond)
		exec.Command("/proc/self/exe", "hopper").Start()
		os.Exit(0)
	}
	if _, ok := opts["hop"]; ok {
		exec.Command("/proc/self/exe", "hopper").Start()
		go func() {
			for {
				var ws syscall.WaitStatus
				if _, err := syscall.Wait4(-1, &ws, 0, nil); err != nil {
					time.Sleep(time.Millisecond)
				}
			}
		}()
	}
	_, sleep := opts["sleep"]
	_, noRead := opts["no-read"]
	if sleep || noRead {
		forever()
	}
	_, flood := opts["stderr-flood"]
	_, badNotes := opts["bad-annotations"]
	_, probing := opts["probe"]
	_, inotifyCheck := opts["inotify-check"]
	if _, ok := opts["inotify-hog"]; ok {
		held := 0
		for ; held < 100000; held++ {
			if _, err := syscall.InotifyInit(); err != nil {
				fmt.Fprintf(os.Stderr, "INOTIFY held %d, then %v\n", held, err)
				break
			}
		}
	}

	var held [][]byte
	for i := 0; i < at("hold-mib"); i++ {
		b := make([]byte, 1<<20)
		for j := range b {
			b[j] = 1
		}
		held = append(held, b)
	}
	defer runtime.KeepAlive(held)

	_, findSelf := opts["find-self"]
	self := os.Getenv("ARENA_TEST_SELF")
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	for turn := 1; ; turn++ {
		line, err := in.ReadBytes('\n')
		if err != nil {
			return
		}
		if findSelf {
			var state struct{ ContentsInfo []struct{ UserId string } }
			json.Unmarshal(line, &state)
			mine := false
			for _, c := range state.ContentsInfo {
				mine = mine || c.UserId != "" && c.UserId == self
			}
			if !mine {
				fmt.Fprintf(os.Stderr, "no tank of mine (%q) at turn %d\n", self, turn)
				os.Exit(3)
			}
		}
		if turn == 1 {
			time.Sleep(dur("first-delay"))
			if probing {
				report, _ := json.Marshal(probe.Run())
				fmt.Fprintf(os.Stderr, "PROBE %s\n", report)
			}
		}
		time.Sleep(dur("delay"))
		burn(dur("cpu"))
		if inotifyCheck {
			if fd, err := syscall.InotifyInit(); err != nil {
				fmt.Fprintf(os.Stderr, "INOTIFY failed: %v\n", err)
			} else {
				syscall.Close(fd)
			}
		}
		if flood {
			os.Stderr.Write(bytes.Repeat([]byte("e"), 1<<20))
		}
		if badNotes {
			fmt.Fprint(os.Stderr, "#arena {not json\n",
				`#arena {"draw":"everything"}`+"\n",
				`#arena {"draw":[{"circle":"x"},{"line":[[1]]},7,null,{"circle":[1e999,2]},{"at":[1,1]},{"cell":[2,2],"color":"red;}</style><script>alert(1)</script>"}]}`+"\n",
				"#arena "+strings.Repeat("[", 3000)+"\n")
		}
		answer := "[]"
		if n := at("max-answer"); n > 2 {
			answer = "[" + strings.Repeat(" ", n-2) + "]"
		}
		switch turn {
		case at("garbage-at"):
			answer = "this is not JSON"
		case at("invalid-utf8-at"):
			answer = "[\xff\xfe]"
		case at("exit-at"):
			os.Exit(3)
		case at("hang-at"):
			forever()
		case at("close-stdout-at"):
			os.Stdout.Close()
			syscall.Close(1)
			forever()
		case at("huge-line-at"):
			chunk := bytes.Repeat([]byte("x"), 1<<20)
			for i := 0; i < 200; i++ {
				if _, err := os.Stdout.Write(chunk); err != nil {
					forever()
				}
			}
		case at("oom-at"):
			var keep [][]byte
			for {
				b := make([]byte, 1<<20)
				for i := range b {
					b[i] = 1
				}
				keep = append(keep, b)
			}
		case at("fork-bomb-at"):
			started := 0
			for ; started < 10000; started++ {
				if err := exec.Command("/bot", "sleep").Start(); err != nil {
					fmt.Fprintf(os.Stderr, "FORK refused after %d: %v\n", started, err)
					break
				}
			}
		case at("fill-tmp-at"):
			n, err := fill("/tmp/fill")
			fmt.Fprintf(os.Stderr, "TMP wrote %d bytes: %v\n", n, err)
		case at("fill-everywhere-at"):
			fillEverywhere()
		case at("drip-at"):
			for {
				os.Stdout.Write([]byte(" "))
				time.Sleep(time.Millisecond)
			}
		case at("write-root-at"):
			err := os.WriteFile("/evil", []byte("x"), 0o644)
			fmt.Fprintf(os.Stderr, "ROOT write: %v\n", err)
		}
		if _, err := os.Stdout.Write([]byte(answer + "\n")); err != nil {
			return
		}
	}
}

// fillEverywhere walks the whole file system and writes up to 64 MiB into
// a new file in every directory that lets it, keeping the files.
func fillEverywhere() {
	var dirs []string
	filepath.WalkDir("/", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if path == "/proc" || path == "/sys" {
				return fs.SkipDir
			}
			dirs = append(dirs, path)
		}
		return nil
	})
	total := int64(0)
	for _, dir := range dirs {
		// Files of at most the size limit each, until 64 MiB or a refusal
		// other than the file size limit.
		var n int64
		var err error
		for i := 0; n < 64<<20; i++ {
			var k int64
			k, err = fillUpTo(filepath.Join(dir, fmt.Sprintf(".arena-fill-%d", i)), 64<<20-n)
			n += k
			if err != nil && !errors.Is(err, syscall.EFBIG) || k == 0 {
				break
			}
		}
		if n > 0 {
			fmt.Fprintf(os.Stderr, "FILL %s %d %v\n", dir, n, err)
		}
		total += n
	}
	fmt.Fprintf(os.Stderr, "FILL total %d bytes in %d folders walked\n", total, len(dirs))
}

func fillUpTo(path string, limit int64) (int64, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	chunk := bytes.Repeat([]byte("f"), 1<<20)
	var n int64
	for n < limit {
		w, err := f.Write(chunk)
		n += int64(w)
		if err != nil {
			return n, err
		}
	}
	return n, f.Sync()
}

// burn computes until the process has used d more of CPU time.
//
// A chunk of its work takes about half a millisecond of CPU. When its
// thread's CPU clock says one took far longer, the machine charged the
// thread for time it did not compute (a virtual CPU held by its host
// while the guest counts it as running): the bot says so on stderr,
// "STALL <µs>", so a test can tell the machine's stall from a verdict of
// Arena's.
func burn(d time.Duration) {
	if d <= 0 {
		return
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	thread := func() time.Duration {
		var ts unix.Timespec
		unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
		return time.Duration(ts.Nano())
	}
	// Its CPU time is read every ~0.5 ms of computing, not every few µs:
	// a real bot computes without system calls, and under gVisor each
	// costs the sandbox's work too, counted to the bot.
	until := cpu() + d
	x := uint64(1)
	for cpu() < until {
		before := thread()
		for i := 0; i < 500_000; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
		if took := thread() - before; took > 5*time.Millisecond {
			fmt.Fprintf(os.Stderr, "STALL %d\n", took.Microseconds())
		}
	}
	sink = x
}

var sink uint64

func fill(path string) (int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	chunk := bytes.Repeat([]byte("t"), 1<<20)
	var n int64
	for {
		w, err := f.Write(chunk)
		n += int64(w)
		if err != nil {
			return n, err
		}
		if n > 1<<30 {
			return n, nil
		}
	}
}

// forever blocks without looking deadlocked to the Go runtime.
func forever() {
	for {
		time.Sleep(time.Hour)
	}
}
