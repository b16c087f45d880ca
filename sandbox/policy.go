package sandbox

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/docker/docker/api/types/container"
)

// Policy is the hardening and the limits applied to every bot container.
// The zero value is not usable; start from DefaultPolicy.
type Policy struct {
	// MemoryBytes is the memory limit; swap is disabled (swap limit equal
	// to memory).
	MemoryBytes int64
	// NanoCPUs is the CPU quota in billionths of a CPU (1e9 = one CPU);
	// 0: no quota.
	NanoCPUs int64
	// CPUSet pins the bot to these CPUs ("0", "1-3"); empty means any.
	CPUSet string
	// PidsLimit caps processes and threads inside the container.
	PidsLimit int64
	// TmpfsBytes is the size of the writable /tmp, and of a tmpfs over
	// each volume the image declares; the root filesystem is read-only.
	TmpfsBytes int64
	// ShmBytes is the size of /dev/shm.
	ShmBytes int64
	// NoFile caps open file descriptors.
	NoFile int64
	// FileSizeBytes caps the size of any file the bot writes.
	FileSizeBytes int64
	// FallbackUID is the first of the UIDRange unprivileged uids bots run
	// as: every running bot has one of its own (see uids.go), so per-user
	// kernel limits cannot couple them.
	FallbackUID int
	UIDRange    int
	// SeccompUnconfined turns the engine's seccomp profile off. It exists
	// for measurement only (arena doctor times what seccomp costs); no
	// setting reaches it.
	SeccompUnconfined bool
	// Runtime is the OCI runtime (e.g. "runsc"); empty is the engine's
	// default.
	Runtime string
}

// DefaultPolicy is the documented default (SECURITY.md).
func DefaultPolicy() Policy {
	return Policy{
		MemoryBytes:   256 << 20,
		NanoCPUs:      1e9,
		PidsLimit:     64,
		TmpfsBytes:    16 << 20,
		ShmBytes:      16 << 20,
		NoFile:        256,
		FileSizeBytes: 16 << 20,
		FallbackUID:   20000,
		UIDRange:      10000,
	}
}

// MinMemoryBytes is the least memory a bot may be given: the engine's
// minimum.
const MinMemoryBytes = 6 << 20

// forSpec is the policy of one bot: the spec's memory limit and CPU
// quota where it sets them.
func (p Policy) forSpec(s Spec) Policy {
	if s.MemoryBytes > 0 {
		p.MemoryBytes = s.MemoryBytes
	}
	if s.NanoCPUs > 0 {
		p.NanoCPUs = s.NanoCPUs
	}
	return p
}

// checkSpec says what in a spec the sandbox cannot apply.
func checkSpec(s Spec) error {
	if s.MemoryBytes != 0 && s.MemoryBytes < MinMemoryBytes {
		return fmt.Errorf("%w: memory limit %d bytes is below the engine's minimum of 6 MiB", ErrBadSpec, s.MemoryBytes)
	}
	if s.NanoCPUs != 0 && s.NanoCPUs < 1e7 {
		return fmt.Errorf("%w: cpu quota %d nano-CPUs is below 0.01 CPU", ErrBadSpec, s.NanoCPUs)
	}
	return nil
}

// Validate reports the first unusable field by name.
func (p Policy) Validate() error {
	switch {
	case p.MemoryBytes < MinMemoryBytes:
		return fmt.Errorf("memory limit %d bytes is below the engine's minimum of 6 MiB", p.MemoryBytes)
	case p.NanoCPUs != 0 && p.NanoCPUs < 1e7:
		return fmt.Errorf("cpu quota %d nano-CPUs is below 0.01 CPU", p.NanoCPUs)
	case p.PidsLimit < 1:
		return fmt.Errorf("pids limit %d must be at least 1", p.PidsLimit)
	case p.TmpfsBytes < 0:
		return fmt.Errorf("tmpfs size %d must not be negative", p.TmpfsBytes)
	case p.ShmBytes < 0:
		return fmt.Errorf("/dev/shm size %d must not be negative", p.ShmBytes)
	case p.NoFile < 16:
		return fmt.Errorf("open-files limit %d must be at least 16", p.NoFile)
	case p.FileSizeBytes < 0:
		return fmt.Errorf("file-size limit %d must not be negative", p.FileSizeBytes)
	case p.FallbackUID < 1 || p.UIDRange < 1 || p.FallbackUID+p.UIDRange > 1<<31-1:
		return fmt.Errorf("fallback uid range %d+%d is not a range of unprivileged uids", p.FallbackUID, p.UIDRange)
	}
	if p.CPUSet != "" {
		if err := validateCPUSet(p.CPUSet); err != nil {
			return err
		}
	}
	return nil
}

func validateCPUSet(s string) error {
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err1 := strconv.Atoi(lo)
		b, err2 := a, error(nil)
		if isRange {
			b, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || a < 0 || b < a {
			return fmt.Errorf("cpuset %q is not a list of CPUs such as 0 or 0-1,3", s)
		}
	}
	return nil
}

// containerSpec is what one bot's container needs: the pure inputs to
// containerConfig.
type containerSpec struct {
	image   string
	env     []string
	labels  map[string]string
	user    string // empty: the image's own user
	runtime Runtime
	// volumes are the image's declared volumes: each gets a tmpfs, so the
	// engine makes no volume on the host's disk.
	volumes []string
}

// containerConfig decides the container's configuration from the policy.
// It is pure so the policy can be checked without an engine.
func containerConfig(p Policy, s containerSpec) (*container.Config, *container.HostConfig) {
	cfg := &container.Config{
		Image:           s.image,
		Env:             s.env,
		Labels:          s.labels,
		User:            s.user,
		AttachStdin:     true,
		AttachStdout:    true,
		AttachStderr:    true,
		OpenStdin:       true,
		StdinOnce:       true,
		NetworkDisabled: true,
	}
	yes := true
	host := &container.HostConfig{
		NetworkMode:    "none",
		ReadonlyRootfs: true,
		Tmpfs:          tmpfs(p, s.volumes),
		ShmSize:        p.ShmBytes,
		CapDrop:        []string{"ALL"},
		SecurityOpt:    []string{"no-new-privileges"},
		LogConfig:      container.LogConfig{Type: "none"},
		Init:           &yes,
		IpcMode:        "private",
		Runtime:        s.runtime.Name,
		Resources: container.Resources{
			Memory:     p.MemoryBytes,
			MemorySwap: p.MemoryBytes,
			NanoCPUs:   p.NanoCPUs,
			CpusetCpus: p.CPUSet,
			PidsLimit:  &p.PidsLimit,
			Ulimits: []*container.Ulimit{
				{Name: "nofile", Soft: p.NoFile, Hard: p.NoFile},
				{Name: "fsize", Soft: p.FileSizeBytes, Hard: p.FileSizeBytes},
				{Name: "core", Soft: 0, Hard: 0},
			},
		},
	}
	if p.SeccompUnconfined {
		host.SecurityOpt = append(host.SecurityOpt, "seccomp=unconfined")
	}
	if s.runtime.GVisor {
		// gVisor's own threads count against the host's pids limit: the
		// bot's processes are bounded inside the sandbox instead (nproc is
		// counted per sandbox there), and the host's limit leaves room for
		// the sandbox itself.
		host.PidsLimit = ptr(gvisorPids(p.PidsLimit))
		host.Ulimits = append(host.Ulimits, &container.Ulimit{Name: "nproc", Soft: p.PidsLimit, Hard: p.PidsLimit})
	}
	return cfg, host
}

// gvisorPids is the host's pids limit for a gVisor sandbox whose bot may
// have pids processes and threads: gVisor itself runs some 60 threads,
// and each guest process adds about 15.
func gvisorPids(pids int64) int64 { return max(1024, 16*pids) }

func ptr[T any](v T) *T { return &v }

// tmpfs are the bot's writable places: /tmp and the image's volumes,
// each a tmpfs of TmpfsBytes (in memory, charged to the bot's memory
// limit).
func tmpfs(p Policy, volumes []string) map[string]string {
	opts := fmt.Sprintf("rw,nosuid,nodev,size=%d,mode=1777", p.TmpfsBytes)
	m := map[string]string{"/tmp": opts}
	for _, v := range volumes {
		m[v] = opts
	}
	return m
}
