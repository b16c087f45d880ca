// Package sandboxed runs sourcebuild's build steps in Arena's sandbox:
// the sandbox of the matches, under a build's limits. It is the only
// part of building an upload that starts a container.
package sandboxed

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"arena/sandbox"
	"arena/sourcebuild"
)

// Sandbox starts a build step's container (sandbox.Docker).
type Sandbox interface {
	Image(ctx context.Context, ref string) (sandbox.Image, error)
	Start(ctx context.Context, s sandbox.Spec) (*sandbox.Container, error)
}

// Steps runs build steps in a sandbox (a sourcebuild.Runner).
type Steps struct {
	Sandbox Sandbox
	// Timeout bounds a build step.
	Timeout time.Duration
	// MaxBinary bounds what a build step may hand back.
	MaxBinary int
}

// Run runs step: the upload (src, a .tar.gz) goes in as one line of
// base64 on the step's stdin, the binary comes back as one on its
// stdout, and its stderr is the log, a second at a time.
func (s Steps) Run(ctx context.Context, id string, step sourcebuild.Step, main string, src []byte, log io.Writer) ([]byte, error) {
	img, err := s.Sandbox.Image(ctx, step.Image)
	if err != nil {
		return nil, fmt.Errorf("the build image %s: %w", step.Image, err)
	}
	c, err := s.Sandbox.Start(ctx, sandbox.Spec{Image: img, MatchID: "build-" + id, BotID: "build", MaxMessageBytes: s.MaxBinary,
		Env: []string{"BOT=" + main}, Args: []string{"/bin/sh", "-c", step.Script}})
	if err != nil {
		return nil, fmt.Errorf("start the build: %w", err)
	}
	defer c.Close(context.WithoutCancel(ctx))
	start := time.Now()
	limit := start.Add(s.Timeout)
	line := append([]byte(base64.StdEncoding.EncodeToString(src)), '\n')
	if err := c.Send(line, limit); err != nil {
		return nil, fmt.Errorf("hand the build its files: %w", err)
	}
	for {
		// The log as it comes, a second at a time.
		next := time.Now().Add(time.Second)
		if next.After(limit) {
			next = limit
		}
		out, err := c.Receive(ctx, next)
		log.Write(c.TakeStderr().Text)
		switch {
		case err == nil:
			bin, derr := base64.StdEncoding.DecodeString(strings.TrimSpace(string(out)))
			if derr != nil || len(bin) == 0 {
				return nil, fmt.Errorf("%w: the build step's output is not a binary", sourcebuild.ErrBuild)
			}
			fmt.Fprintf(log, "built in %v: %d bytes\n", time.Since(start).Round(time.Millisecond), len(bin))
			return bin, nil
		case errors.Is(err, sandbox.ErrTimeout) && time.Now().Before(limit):
			continue
		case errors.Is(err, sandbox.ErrTimeout):
			fmt.Fprintf(log, "the build ran past its limit of %v: stopped\n", s.Timeout)
			return nil, fmt.Errorf("%w: it ran past its limit of %v", sourcebuild.ErrBuild, s.Timeout)
		case ctx.Err() != nil:
			return nil, ctx.Err()
		}
		ectx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		exit := c.Exit(ectx)
		cancel()
		log.Write(c.TakeStderr().Text)
		switch {
		case exit.OOMKilled:
			return nil, fmt.Errorf("%w: it ran out of memory", sourcebuild.ErrBuild)
		case exit.Code != 0:
			return nil, fmt.Errorf("%w: the build step exited with code %d (see the log)", sourcebuild.ErrBuild, exit.Code)
		}
		return nil, fmt.Errorf("%w: %v", sourcebuild.ErrBuild, err)
	}
}
