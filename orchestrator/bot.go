package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"arena/imageref"
	"arena/internal/errs"
	"arena/matches"
	"arena/sandbox"
)

// Conn is what a match needs of a running bot in every turn: deliver its
// input, read its answer, collect what it wrote to stderr and what it
// used.
type Conn interface {
	Send(p []byte, deadline time.Time) error
	Receive(ctx context.Context, deadline time.Time) ([]byte, error)
	TakeStderr() sandbox.Stderr
	// Thaw lets the bot run until its next answer, at which it is frozen
	// again; an error says why it cannot be frozen (it then just runs).
	Thaw() error
	// Sample reads the CPU time used so far and the time spent waiting
	// for a CPU; CPUTime only the first, cheap enough to poll; both false
	// when the bot's cgroup cannot be read.
	Sample() (sandbox.Sample, bool)
	CPUTime() (time.Duration, bool)
	// Runnable reports whether the bot is runnable now: computing, or
	// kept from a CPU (a wait not in Sample's figures yet).
	Runnable() bool
	// Usage reads every figure (memory peak, OOM kills, refused forks).
	Usage() sandbox.Usage
}

// Lifecycle is what a match needs of a bot over its life: when it
// started (the warm-up runs from there), how it ended, and its end.
type Lifecycle interface {
	Started() time.Time
	// Exit waits (until ctx is done) for the bot to end on its own.
	Exit(ctx context.Context) sandbox.Exit
	// Stop ends the bot and says how it ended.
	Stop(ctx context.Context) sandbox.Exit
	// Close releases everything held for the bot (its container); it is
	// safe to call more than once.
	Close(ctx context.Context) error
}

// Bot is a running bot.
type Bot interface {
	Conn
	Lifecycle
}

// freezeSwitch is a bot that can be let run between its answers rather
// than frozen at each (sandbox.Container, sandbox.Process); a bot that
// cannot is frozen at each, when it can be frozen at all.
type freezeSwitch interface{ FreezeAtAnswers(on bool) }

// answerFigurer is a bot whose figures may be read after its answers,
// off their path (sandbox.Container, sandbox.Process): by the freeze that
// follows each, or with no freeze where its wait is slow to read. A
// frozen bot's stand until it is thawed.
type answerFigurer interface {
	FiguresAfterAnswers() bool
	AnswerFigures() (sandbox.Sample, int64, bool)
}

// stdioPather is a bot that says how its stdio travels (optional).
type stdioPather interface{ StdioPath() string }

// stdioPath says how the seats' stdio travelled: each distinct path once.
func stdioPath(seats []*seat) string {
	var paths []string
	for _, s := range seats {
		if sp, ok := s.bot.(stdioPather); ok && !slices.Contains(paths, sp.StdioPath()) {
			paths = append(paths, sp.StdioPath())
		}
	}
	return strings.Join(paths, "; ")
}

// Launcher finds images and starts bots.
type Launcher interface {
	// Check tells whether ref is a well-formed bot reference this launcher
	// accepts, without looking it up.
	Check(ref string) error
	Image(ctx context.Context, ref string) (sandbox.Image, error)
	Launch(ctx context.Context, s sandbox.Spec) (Bot, error)
}

// Docker adapts the Docker sandbox to a Launcher.
func Docker(d *sandbox.Docker) Launcher { return Launchers(d, nil) }

// Launchers routes bots: references with the "exec:" prefix run as local
// processes when local is set (and are refused when it is not), all
// others as Docker containers.
func Launchers(d *sandbox.Docker, local *sandbox.Local) Launcher {
	return router{docker: d, local: local}
}

type router struct {
	docker *sandbox.Docker
	local  *sandbox.Local
}

func (r router) Check(ref string) error {
	if sandbox.IsLocalRef(ref) {
		if r.local == nil {
			return fmt.Errorf("%w: local bots (%s) are not enabled here", sandbox.ErrBadReference, ref)
		}
		return nil
	}
	return imageref.Check(ref)
}

func (r router) Image(ctx context.Context, ref string) (sandbox.Image, error) {
	if err := r.Check(ref); err != nil {
		return sandbox.Image{}, err
	}
	if sandbox.IsLocalRef(ref) {
		return r.local.Image(ref)
	}
	img, err := r.docker.Image(ctx, ref)
	if errors.Is(err, sandbox.ErrImageNotFound) {
		return img, errs.Mark(matches.ErrImageNotFound, err)
	}
	return img, err
}

func (r router) Launch(ctx context.Context, s sandbox.Spec) (Bot, error) {
	if sandbox.IsLocalRef(s.Image.Ref) && r.local != nil {
		p, err := r.local.Start(ctx, s)
		if err != nil {
			return nil, err
		}
		return p, nil
	}
	c, err := r.docker.Start(ctx, s)
	if err != nil {
		return nil, err
	}
	return c, nil
}
