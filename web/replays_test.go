package web

import (
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"arena/engine"
	"arena/engine/tanks"
	"arena/matches"
	"arena/platform"
	"arena/store"
)

// A replay is kept compressed and served as JSON, gzipped on the way to a
// client that takes it; the replays that expire go after
// ARENA_KEEP_REPLAYS, their results staying, and say so; an admin sees
// the disk's use.
func TestReplaysOnDisk(t *testing.T) {
	ts := newTestServer(t, Config{}, 1, func(c *platform.Config, _ *platform.Deps) {
		c.Replays.Keep = 30 * 24 * time.Hour
	})
	status, created := ts.do(t, "POST", "/api/matches", `{"game":"tanks","seed":7,"bots":["arena/tanks-random","arena/tanks-hunter"],"settings":{"zone_radius":8}}`)
	if status != 201 {
		t.Fatalf("create: %d %v", status, created)
	}
	id := created["id"].(string)
	if m := ts.waitFinal(t, id); m["status"] != "finished" || m["kind"] != "hand" {
		t.Fatalf("match: %v", m)
	}
	file, err := ts.store.ReplayFile(id)
	if err != nil || !strings.HasSuffix(file, ".json.zst") {
		t.Fatalf("the replay's file: %q %v", file, err)
	}

	// Gzipped to a client that takes gzip, plain to one that does not:
	// the same JSON, a replay that verifies.
	var bodies [2][]byte
	for i, accept := range []string{"gzip, deflate", "identity"} {
		res := ts.send(t, "GET", "/api/matches/"+id+"/replay", "", "Accept-Encoding", accept)
		body := io.Reader(res.Body)
		if enc := res.Header.Get("Content-Encoding"); (enc == "gzip") != (i == 0) {
			t.Errorf("Accept-Encoding %q: Content-Encoding %q", accept, enc)
		} else if enc == "gzip" {
			if body, err = gzip.NewReader(res.Body); err != nil {
				t.Fatal(err)
			}
		}
		bodies[i], _ = io.ReadAll(body)
		res.Body.Close()
		if ct := res.Header.Get("Content-Type"); res.StatusCode != 200 || !strings.HasPrefix(ct, "application/json") {
			t.Errorf("Accept-Encoding %q: %d %q", accept, res.StatusCode, ct)
		}
	}
	if string(bodies[0]) != string(bodies[1]) {
		t.Errorf("the gzipped and the plain replay differ")
	}
	var rep matches.Replay
	if err := json.Unmarshal(bodies[1], &rep); err != nil {
		t.Fatal(err)
	}
	if err := matches.Verify([]engine.Game{tanks.New()}, &rep); err != nil {
		t.Errorf("the served replay: %v", err)
	}
	if fi, _ := os.Stat(file); fi.Size()*5 > int64(len(bodies[1])) {
		t.Errorf("on disk %d bytes for %d of JSON", fi.Size(), len(bodies[1]))
	}

	// A ladder's match of 31 days ago loses its replay; the match by hand
	// keeps its own.
	ctx := t.Context()
	old := "0a1dde400001"
	if err := ts.store.Insert(ctx, store.Match{ID: old, Status: "queued", Game: "tanks", Map: "classic", CreatedAt: time.Now(), Kind: string(matches.KindLadder)}); err != nil {
		t.Fatal(err)
	}
	if err := ts.store.Finish(ctx, old, store.Outcome{Status: "finished", Result: json.RawMessage(`{"turns":1}`), Replay: bodies[1]}, time.Now()); err != nil {
		t.Fatal(err)
	}
	_, disk := ts.do(t, "GET", "/api/disk", "")
	if disk["replay_files"].(float64) != 2 || disk["replays_bytes"].(float64) == 0 || disk["database_bytes"].(float64) == 0 || disk["keep_replays"] != "30 days" {
		t.Errorf("disk: %v", disk)
	}
	ts.clock.skip(31 * 24 * time.Hour)
	if n, err := ts.pf.ExpireReplays(ctx); err != nil || n != 1 {
		t.Fatalf("expired %d, %v", n, err)
	}
	_, m := ts.do(t, "GET", "/api/matches/"+old, "")
	if m["replay_expired"] != true || m["replay"] != nil || m["result"] == nil {
		t.Errorf("the ladder's match: %v", m)
	}
	status, body := ts.do(t, "GET", "/api/matches/"+old+"/replay", "")
	if status != 404 || !strings.Contains(body["error"].(string), "expired") || !strings.Contains(body["error"].(string), "ARENA_KEEP_REPLAYS") {
		t.Errorf("its replay: %d %v", status, body)
	}
	if status, _ := ts.do(t, "GET", "/api/matches/"+id+"/replay", ""); status != 200 {
		t.Errorf("the match by hand's replay: %d", status)
	}
	_, disk = ts.do(t, "GET", "/api/disk", "")
	if disk["replay_files"].(float64) != 1 {
		t.Errorf("disk after: %v", disk)
	}

	// A replay an earlier release wrote, plain JSON under ID.json, is
	// served and streamed to the viewer as before.
	earlier := "0ea41e400002"
	if err := ts.store.Insert(ctx, store.Match{ID: earlier, Status: "queued", Game: "tanks", Map: "classic", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := ts.store.Finish(ctx, earlier, store.Outcome{Status: "finished", Result: json.RawMessage(`{"turns":1}`), Replay: bodies[1]}, time.Now()); err != nil {
		t.Fatal(err)
	}
	os.Remove(ts.store.ReplayPath(earlier))
	if err := os.WriteFile(strings.TrimSuffix(ts.store.ReplayPath(earlier), ".zst"), bodies[1], 0o644); err != nil {
		t.Fatal(err)
	}
	res := ts.send(t, "GET", "/api/matches/"+earlier+"/replay", "", "Accept-Encoding", "identity")
	served, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || string(served) != string(bodies[1]) {
		t.Errorf("the earlier release's replay: %d, %d bytes of %d", res.StatusCode, len(served), len(bodies[1]))
	}
	res = ts.send(t, "GET", "/api/matches/"+earlier+"/stream", "")
	frames := 0
	for _, e := range readEvents(t, res.Body) {
		if e.name == "frame" {
			frames++
		}
	}
	res.Body.Close()
	if frames != len(rep.Frames) {
		t.Errorf("the earlier release's replay streamed %d frames of %d", frames, len(rep.Frames))
	}
}
