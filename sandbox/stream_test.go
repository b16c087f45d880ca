package sandbox

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"testing"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/network"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// createAPI is a fake engine for container creation. Calls it does not
// expect panic (the embedded interface is nil).
type createAPI struct {
	DockerAPI
	// refuse decides whether a create fails, from the container's mounts.
	refuse   func(host *container.HostConfig) error
	creates  int
	attaches int
}

func (f *createAPI) ContainerCreate(_ context.Context, _ *container.Config, host *container.HostConfig, _ *network.NetworkingConfig, _ *ocispec.Platform, _ string) (container.CreateResponse, error) {
	f.creates++
	if err := f.refuse(host); err != nil {
		return container.CreateResponse{}, err
	}
	return container.CreateResponse{ID: "c" + strings.Repeat("0", 20)}, nil
}

func (f *createAPI) ContainerAttach(context.Context, string, container.AttachOptions) (types.HijackedResponse, error) {
	f.attaches++
	conn, _ := net.Pipe()
	return types.NewHijackedResponse(conn, ""), nil
}

var errNoMounts = errors.New("invalid mount config: bind source path does not exist")

// The FIFO path falls back to the attach stream when the engine refuses
// the FIFO container and accepts the attach one; the fallback sticks and
// says why. It does not when the image has no command, or when the attach
// stream fails too.
func TestFIFOFallback(t *testing.T) {
	fifoOnly := func(host *container.HostConfig) error {
		if len(host.Mounts) > 0 {
			return errNoMounts
		}
		return nil
	}
	tests := []struct {
		name        string
		give        Image
		refuse      func(*container.HostConfig) error
		wantErr     string
		wantPath    string
		wantCreates int
	}{
		{"the engine cannot mount the FIFOs", Image{Ref: "bot", Cmd: []string{"/bot"}}, fifoOnly, "", "attach (the FIFO path failed: create container for b: " + errNoMounts.Error() + ")", 2},
		{"FIFOs work", Image{Ref: "bot", Cmd: []string{"/bot"}}, func(*container.HostConfig) error { return nil }, "", "fifo", 1},
		{"no command", Image{Ref: "bot"}, fifoOnly, errNoCommand.Error(), "fifo", 0},
		{"the engine refuses both", Image{Ref: "bot", Cmd: []string{"/bot"}}, func(*container.HostConfig) error { return cerrdefs.ErrUnavailable }, "create container for b: unavailable", "fifo", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := &createAPI{refuse: tt.refuse}
			dir := t.TempDir()
			d, err := NewDocker(api, DefaultPolicy(), Owner{Host: "h", PID: 1, Start: 1}, WithFIFO(FIFO{Dir: dir, Launcher: "/no/launcher"}))
			if err != nil {
				t.Fatal(err)
			}
			s := Spec{Image: tt.give, Name: "arena-m-0", BotID: "b"}
			id, st, err := d.create(t.Context(), d.botContainer(s, 20001), s)
			if st != nil {
				t.Cleanup(func() { st.interrupt(); st.close() })
			}
			if tt.wantErr == "" && (err != nil || id == "" || st == nil) || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("create = %q, %v, %v; want error %q", id, st, err, tt.wantErr)
			}
			if got := d.StdioPath(); got != tt.wantPath {
				t.Errorf("StdioPath = %q, want %q", got, tt.wantPath)
			}
			if api.creates != tt.wantCreates {
				t.Errorf("%d creates, want %d", api.creates, tt.wantCreates)
			}
			// A FIFO folder outlives its create only with its container.
			if _, fifo := st.(*botPipes); !fifo {
				if left, _ := os.ReadDir(dir); len(left) > 0 {
					t.Errorf("the failed FIFO create left %s", left[0].Name())
				}
			}
		})
	}
}

// Once the FIFO path failed, later bots go straight to the attach stream.
func TestFIFOFallbackSticks(t *testing.T) {
	api := &createAPI{refuse: func(host *container.HostConfig) error {
		if len(host.Mounts) > 0 {
			return errNoMounts
		}
		return nil
	}}
	d, err := NewDocker(api, DefaultPolicy(), Owner{}, WithFIFO(FIFO{Dir: t.TempDir(), Launcher: "/no/launcher"}))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		s := Spec{Image: Image{Ref: "bot", Cmd: []string{"/bot"}}, BotID: "b"}
		_, st, err := d.create(t.Context(), d.botContainer(s, 20001), s)
		if err != nil {
			t.Fatalf("bot %d: %v", i, err)
		}
		if _, ok := st.(*attachStream); !ok {
			t.Fatalf("bot %d: stream %T, want the attach stream", i, st)
		}
		st.interrupt()
	}
	if api.creates != 4 || api.attaches != 3 {
		t.Errorf("%d creates and %d attaches, want 4 and 3", api.creates, api.attaches)
	}
}
