package probe

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// Outside a sandbox the probe reports this process: its ids, its
// interfaces, what it could write (and it leaves nothing behind). The
// report's JSON keys are its field names.
func TestRunReportsThisProcess(t *testing.T) {
	t.Setenv("ARENA_BOT_ID", "bot#2")
	writable := t.TempDir()
	r := run(filepath.Join(t.TempDir(), "absent"), writable)
	if r.UID != os.Getuid() || r.GID != os.Getgid() || r.PID != os.Getpid() || r.BotID != "bot#2" {
		t.Errorf("ids: %+v", r)
	}
	if len(r.Interfaces) == 0 || r.CapEff == "" || r.NoNewPrivs == "" || r.Hostname == "" {
		t.Errorf("report: %+v", r)
	}
	if r.RootWriteErr == "" || r.TmpWriteErr != "" {
		t.Errorf("writes: root %q, tmp %q", r.RootWriteErr, r.TmpWriteErr)
	}
	if left, _ := os.ReadDir(writable); len(left) > 0 {
		t.Errorf("the probe left %s", left[0].Name())
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var keys map[string]any
	json.Unmarshal(b, &keys)
	for _, k := range []string{"UID", "GID", "PID", "Hostname", "BotID", "CapEff", "NoNewPrivs", "Interfaces", "DialErr", "RootWriteErr", "TmpWriteErr", "DockerSockFound"} {
		if _, ok := keys[k]; !ok {
			t.Errorf("no key %q in %s", k, b)
		}
	}
}
