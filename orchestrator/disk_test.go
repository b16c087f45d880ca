package orchestrator_test

import (
	"encoding/json"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/volume"
	"go.uber.org/zap/zaptest"
	"golang.org/x/sys/unix"

	"arena/engine"
	"arena/engine/tanks"
	"arena/internal/testsupport/dockertest"
	"arena/matches"
	"arena/orchestrator"
	"arena/sandbox"
)

// Nothing a bot writes lands on the host's disk outside its capped,
// in-memory places: a bot that walks its whole file system and writes up
// to 64 MiB into every folder that lets it — including a volume its image
// declares — changes the engine's disk and the stdio folder by less than
// 1 MiB, makes no volume, and still answers. Every place it could write
// is one of the bounded ones.
func TestWritingEverywhereReachesNoDisk(t *testing.T) {
	cli := dockertest.Client(t)
	bin := dockertest.GoBinary(t, dockertest.Root(), "./internal/testsupport/testbots/tankbot")
	img := dockertest.Build(t, cli, "arena-test/tankbot:fill-everywhere-volume",
		"FROM scratch\nCOPY bot /bot\nUSER 65534:65534\nVOLUME /data\nENTRYPOINT [\"/bot\"]\nCMD [\"fill-everywhere-at=1\"]\n",
		map[string]string{"bot": "@" + bin})
	hunter := dockertest.ExampleBots(t, cli)[1]
	info, err := cli.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	fifo := dockertest.FIFO(t)
	owner, err := sandbox.Self()
	if err != nil {
		t.Fatal(err)
	}
	policy := sandbox.DefaultPolicy()
	d, err := sandbox.NewDocker(cli, policy, owner, sandbox.WithFIFO(fifo), sandbox.WithLogger(zaptest.NewLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	free := func() int64 {
		var st unix.Statfs_t
		if err := unix.Statfs(info.DockerRootDir, &st); err != nil {
			t.Fatal(err)
		}
		return int64(st.Bavail) * st.Bsize
	}
	used := func(dir string) int64 {
		var n int64
		filepath.WalkDir(dir, func(_ string, e fs.DirEntry, err error) error {
			if err == nil && !e.IsDir() {
				if i, err := e.Info(); err == nil && i.Mode().IsRegular() {
					n += i.Size()
				}
			}
			return nil
		})
		return n
	}
	volumes := func() int {
		list, err := cli.VolumeList(t.Context(), volume.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return len(list.Volumes)
	}
	playMatch := func(images ...string) *matches.Replay {
		req := matches.Request{Game: tanks.New(), Map: classic(t), Seed: 3, Images: images,
			Settings: json.RawMessage(`{"zone_radius":10}`), MatchID: matches.NewMatchID(),
			Limits: matches.Limits{WarmUp: 20 * time.Second}}
		t.Cleanup(func() { dockertest.NoContainersLeft(t, cli, req.MatchID) })
		rep, err := orchestrator.New(orchestrator.Docker(d)).Play(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	// What the same match does to the disk with a bot that writes nothing
	// (the engine's own files, and whatever else the machine writes
	// meanwhile) is the baseline.
	freeBefore := free()
	playMatch(hunter, hunter)
	baseline := freeBefore - free()
	freeBefore, stdioBefore, volumesBefore := free(), used(fifo.Dir), volumes()
	rep := playMatch(img, hunter)
	if b := rep.Result.Bots[0]; b.Status != engine.StatusOK || b.Answers < 2 {
		t.Errorf("the bot is %s after %d answers (%s)", b.Status, b.Answers, b.FaultDetail)
	}
	stderr := stderrOf(rep, 0)
	if !strings.Contains(stderr, "FILL total") {
		t.Fatalf("the bot did not report: %q", stderr)
	}
	// Every place written to is a bounded tmpfs.
	bounded := map[string]int64{"/tmp": policy.TmpfsBytes, "/data": policy.TmpfsBytes, "/dev/shm": policy.ShmBytes}
	for _, m := range regexp.MustCompile(`(?m)^FILL (/\S*) (\d+) (.*)$`).FindAllStringSubmatch(stderr, -1) {
		n, _ := strconv.ParseInt(m[2], 10, 64)
		limit, ok := bounded[m[1]]
		if !ok && n > 0 {
			t.Errorf("wrote %d bytes into %s, which is not a bounded place", n, m[1])
		}
		if ok && (n > limit || !strings.Contains(m[3], "no space left on device")) {
			t.Errorf("wrote %d bytes into %s (%s), limit %d", n, m[1], m[3], limit)
		}
		t.Logf("%s: %d bytes (%s)", m[1], n, m[3])
	}
	if d := freeBefore - free() - baseline; d > 1<<20 || d < -1<<20 {
		t.Errorf("the engine's disk (%s) changed by %d bytes more than with a bot that writes nothing", info.DockerRootDir, d)
	}
	if d := used(fifo.Dir) - stdioBefore; d > 1<<20 {
		t.Errorf("the stdio folder grew by %d bytes", d)
	}
	if n := volumes(); n != volumesBefore {
		t.Errorf("%d volumes before the match, %d after", volumesBefore, n)
	}
	if err := matches.Verify([]engine.Game{tanks.New()}, rep); err != nil {
		t.Errorf("the replay does not verify: %v", err)
	}
}
