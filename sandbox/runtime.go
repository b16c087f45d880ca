package sandbox

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/docker/docker/api/types/system"
)

// Runtime is the OCI runtime bots run under, as far as the sandbox must
// know it. The engine's default runtime (runc) is the zero value.
type Runtime struct {
	// Name is the engine's name for it; empty: the engine's default.
	Name string
	// GVisor is set for gVisor (runsc): a user-space kernel whose own
	// threads count against the container's pids limit, so the bot's
	// process limit becomes an nproc limit inside the sandbox, and whose
	// host FIFOs work only with --host-fifo=open.
	GVisor bool
	// HostFIFO is set when bots' FIFOs on the host work under it.
	HostFIFO bool
}

// DescribeRuntime finds the named runtime in the engine's information;
// an unknown name is an error listing the engine's runtimes.
func DescribeRuntime(info system.Info, name string) (Runtime, error) {
	if name == "" {
		return Runtime{HostFIFO: true}, nil
	}
	rt, ok := info.Runtimes[name]
	if !ok {
		names := make([]string, 0, len(info.Runtimes))
		for n := range info.Runtimes {
			names = append(names, n)
		}
		slices.Sort(names)
		return Runtime{}, fmt.Errorf("the engine has no runtime %q (it has: %s)", name, strings.Join(names, ", "))
	}
	r := Runtime{Name: name, HostFIFO: true}
	if filepath.Base(rt.Path) == "runsc" || name == "runsc" {
		r.GVisor = true
		r.HostFIFO = slices.Contains(rt.Args, "--host-fifo=open")
	}
	return r, nil
}

// StdioObstacle says why bots' FIFOs cannot work under the runtime; empty
// when they can.
func (r Runtime) StdioObstacle() string {
	if r.HostFIFO {
		return ""
	}
	return fmt.Sprintf("the runtime %s is not registered with --host-fifo=open, which bots' FIFOs need", r.Name)
}
