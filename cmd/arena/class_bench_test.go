package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"arena/internal/testsupport/dockertest"
	"arena/internal/testsupport/poll"
)

// BenchmarkAClass runs a course on one server, as a class does: 100
// sign-ups from one address with invitations, 100 pushes (45 hunters,
// 45 random bots, 10 bots that crash: rejected by their checks), 100
// entries, a Swiss final at the deadline. It reports each phase's time,
// the final's games a second against the bare container lifecycle of the
// same bots (arena bench --baseline), the server's peak memory and the
// most warm containers it kept during the final (ARENA_POOL_MAX). Too
// long for the suite: make bench runs it. ARENA_BENCH_CLASS (100) sets the
// class's size, ARENA_BENCH_SWISS_ROUNDS the final's rounds (0: the
// format's own, ⌈log₂ n⌉ + 2).
func BenchmarkAClass(b *testing.B) {
	size := envInt(b, "ARENA_BENCH_CLASS", 100)
	rounds := envInt(b, "ARENA_BENCH_SWISS_ROUNDS", 0)
	cli := dockertest.Client(b)
	examples := dockertest.ExampleBots(b, cli)
	crash := dockertest.TestBot(b, cli, "exit-at=2")
	images := map[string]v1.Image{}
	for kind, ref := range map[string]string{"random": examples[0], "hunter": examples[1], "crash": crash} {
		images[kind] = savedImage(b, ref)
	}
	bin := arenaBinary(b)
	for b.Loop() {
		port := freePort(b)
		host := fmt.Sprintf("127.0.0.1:%d", port)
		s := startServer(b, bin, b.TempDir(), port, "--auth", "accounts", "--admin-password", "the-admin-password", "--ladder", "off")
		admin := signedIn(b, s.url, "admin", "the-admin-password")

		// Sign-ups, from this one address, ten at a time.
		start := time.Now()
		tokens := make([]string, size)
		var wg sync.WaitGroup
		sem := make(chan struct{}, 10)
		for i := range size {
			_, inv := admin.call(b, "POST", "/api/invites", `{}`)
			code, _ := inv["code"].(string)
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				jar, _ := cookiejar.New(nil)
				c := &webClient{Client: &http.Client{Jar: jar, Timeout: 30 * time.Second}, url: s.url}
				user := fmt.Sprintf("s%03d", i)
				if status, body := c.call(b, "POST", "/api/users", fmt.Sprintf(`{"name":%q,"password":"%s-password","invite":%q}`, user, user, code)); status != 201 {
					b.Errorf("%s signs up: %d %v", user, status, body)
					return
				}
				_, tok := c.call(b, "POST", "/api/tokens", `{"name":"docker"}`)
				tokens[i], _ = tok["token"].(string)
			})
		}
		wg.Wait()
		if b.Failed() {
			b.FailNow()
		}
		signups := time.Since(start)

		// Pushes, ten at a time, until the last check.
		start = time.Now()
		kindOf := func(i int) string {
			switch {
			case i%10 == 9:
				return "crash"
			case i%2 == 0:
				return "hunter"
			}
			return "random"
		}
		for i := range size {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				user := fmt.Sprintf("s%03d", i)
				ref, err := name.ParseReference(fmt.Sprintf("%s/%s/tank:v1", host, user), name.Insecure)
				if err != nil {
					b.Error(err)
					return
				}
				if err := remote.Write(ref, images[kindOf(i)], remote.WithAuth(&authn.Basic{Username: user, Password: tokens[i]})); err != nil {
					b.Errorf("%s pushes: %v", user, err)
				}
			})
		}
		wg.Wait()
		if b.Failed() {
			b.FailNow()
		}
		ready, rejected := 0, 0
		poll.Until(b, 30*time.Minute, func() error {
			_, reg := admin.call(b, "GET", "/api/registry?all=1", "")
			imgs, _ := reg["images"].([]any)
			ready, rejected = 0, 0
			for _, img := range imgs {
				switch img.(map[string]any)["state"] {
				case "ready":
					ready++
				case "rejected":
					rejected++
				}
			}
			if ready+rejected < size {
				return fmt.Errorf("%d of %d versions checked", ready+rejected, size)
			}
			return nil
		})
		checks := time.Since(start)

		// Entries, then the final at the deadline.
		freeze := time.Now().Add(30*time.Second + time.Duration(size)*200*time.Millisecond).UTC().Truncate(time.Second)
		spec := fmt.Sprintf(`{"name":"Class cup","game":"tanks","maps":["classic"],"rounds":2,"format":"swiss","swiss_rounds":%d,"freeze_at":%q}`, rounds, freeze.Format(time.RFC3339))
		status, ct := admin.call(b, "POST", "/api/contests", spec)
		if status != 201 {
			b.Fatalf("create the contest: %d %v", status, ct)
		}
		path := fmt.Sprintf("/api/contests/%v", ct["id"])
		for i := range size {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				user := fmt.Sprintf("s%03d", i)
				c := &webClient{Client: &http.Client{Timeout: 30 * time.Second, Transport: bearer(tokens[i])}, url: s.url}
				if status, body := c.call(b, "POST", path+"/entries", fmt.Sprintf(`{"bot":"%s/tank"}`, user)); status != 201 {
					b.Errorf("%s enters: %d %v", user, status, body)
				}
			})
		}
		wg.Wait()
		if b.Failed() {
			b.FailNow()
		}
		time.Sleep(time.Until(freeze)) // Sleeps on purpose: until the freeze, when the server starts the final by its own clock.
		start = time.Now()
		// The warm pool during the final, from the server's metrics.
		peakWarm := 0.0
		sampled := make(chan struct{})
		stopSampling := make(chan struct{})
		go func() {
			defer close(sampled)
			for {
				if v, ok := metricOf(admin, `arena_containers{state="warm"}`); ok {
					peakWarm = max(peakWarm, v)
				}
				select {
				case <-stopSampling:
					return
				case <-time.After(2 * time.Second):
				}
			}
		}()
		var board map[string]any
		poll.Until(b, 3*time.Hour, func() error {
			_, board = admin.call(b, "GET", path+"/standings", "")
			if board["final"] != true {
				return fmt.Errorf("the final is not done")
			}
			return nil
		})
		final := time.Since(start)
		close(stopSampling)
		<-sampled
		games := 0
		for _, g := range board["games"].([]any) {
			if st := g.(map[string]any)["state"]; st == "scored" || st == "void" {
				games++
			}
		}
		peak, _ := readHWM(s.cmd.Process.Pid)
		rate := float64(games) / final.Seconds()
		bare := bareLifecycleRate(b, bin, examples)
		b.ReportMetric(signups.Seconds(), "s-signups")
		b.ReportMetric(checks.Seconds(), "s-push-to-last-check")
		b.ReportMetric(final.Seconds(), "s-freeze-to-standings")
		b.ReportMetric(float64(games), "final-games")
		b.ReportMetric(rate, "games/s")
		b.ReportMetric(bare, "bare-games/s")
		b.ReportMetric(float64(peak)/(1<<20), "MiB-server-peak")
		b.ReportMetric(peakWarm, "warm-containers-peak")
		b.Logf("a class of %d: sign-ups %.1fs; pushes to the last check %.1fs (%d ready, %d rejected); freeze to standings %.1fs, %d games, %.2f games/s (the bare lifecycle of the same bots: %.2f games' worth/s, %.0f%%); the server's peak memory %.0f MiB; warm containers at most %.0f during the final",
			size, signups.Seconds(), checks.Seconds(), ready, rejected, final.Seconds(), games, rate, bare, 100*rate/bare, float64(peak)/(1<<20), peakWarm)
	}
}

// metricOf reads one series of the server's metrics, as c (an admin).
func metricOf(c *webClient, series string) (float64, bool) {
	res, err := c.Get(c.url + "/metrics")
	if err != nil {
		return 0, false
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return seriesValue(string(body), series)
}

// envInt reads a whole-number setting of a benchmark, or def.
func envInt(b *testing.B, key string, def int) int {
	v := os.Getenv(key)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		b.Fatalf("%s=%q: want a whole number", key, v)
	}
	return n
}

// savedImage is a local engine image, labelled for Tanks, as a registry
// client pushes it.
func savedImage(b *testing.B, ref string) v1.Image {
	b.Helper()
	path := filepath.Join(b.TempDir(), "image.tar")
	if out, err := dockerCLI(b, b.TempDir(), "", "save", "-o", path, ref); err != nil {
		b.Fatalf("docker save %s: %v\n%s", ref, err, out)
	}
	tag, err := name.NewTag(ref)
	if err != nil {
		b.Fatal(err)
	}
	img, err := tarball.ImageFromPath(path, &tag)
	if err != nil {
		b.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		b.Fatal(err)
	}
	cfg = cfg.DeepCopy()
	if cfg.Config.Labels == nil {
		cfg.Config.Labels = map[string]string{}
	}
	cfg.Config.Labels["io.arena.game"] = "tanks"
	img, err = mutate.ConfigFile(img, cfg)
	if err != nil {
		b.Fatal(err)
	}
	return img
}

// bareLifecycleRate is the bare container lifecycle of the example bots
// in games' worth a second, as arena bench --baseline measures it.
func bareLifecycleRate(b *testing.B, bin string, bots []string) float64 {
	b.Helper()
	out, err := exec.Command(bin, "bench", "--game", "tanks", "--bots", strings.Join(bots, ","), "--settings", `{"zone_radius":0}`, "--repeats", "5", "--jobs", "2", "--baseline").CombinedOutput()
	if err != nil {
		b.Fatalf("arena bench --baseline: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`took [0-9.]+s, ([0-9.]+) matches' worth/s`).FindSubmatch(out)
	if m == nil {
		b.Fatalf("arena bench --baseline said no rate:\n%s", out)
	}
	rate, _ := strconv.ParseFloat(string(m[1]), 64)
	return rate
}

// bearer is a transport that sends an API token.
type bearer string

func (t bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(t))
	return http.DefaultTransport.RoundTrip(r)
}
