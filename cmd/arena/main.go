// Command arena plays matches between bots packaged as Docker images.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/docker/docker/client"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"arena/engine"
	"arena/engine/pacman"
	"arena/engine/snake"
	"arena/engine/tanks"
	"arena/imageref"
	"arena/internal/errs"
	"arena/judger"
	"arena/matches"
	"arena/sandbox"
	"arena/sandbox/probe"
)

// Exit codes (docs/cli.md): 0 the command did its work, 1 the platform could
// not (no engine, image missing, verification failed), 2 bad usage or input.
const (
	exitOK       = 0
	exitPlatform = 1
	exitUsage    = 2
)

// exitError carries an exit code with its one-line reason.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }

func usageErr(format string, a ...any) error {
	return &exitError{exitUsage, fmt.Errorf(format, a...)}
}

func platformErr(err error) error { return &exitError{exitPlatform, err} }

// badInput reports whether a match's error is bad usage or input (of
// errs.ErrInvalid, exit 2), and not an image missing, which is exit 1.
func badInput(err error) bool {
	return errs.IsInvalid(err) && !errors.Is(err, matches.ErrImageNotFound)
}

// games is every game Arena ships.
func games() []engine.Game { return []engine.Game{tanks.New(), snake.New(), pacman.New()} }

// findGame is a built-in game by its name, or the game of a logic image
// ("logic:IMAGE", see package judger) for matches of players bots; the
// image's labels are checked against it when a match starts.
func findGame(name string, players int, logic judger.Limits) (engine.Game, error) {
	if ref, ok := strings.CutPrefix(name, judger.Prefix); ok {
		if err := imageref.Check(ref); err != nil {
			return nil, fmt.Errorf("game %s: %v", name, err)
		}
		return judger.New(ref, players).WithLimits(logic), nil
	}
	return engine.Find(games(), name)
}

const mainUsage = `arena plays matches between bots packaged as Docker images.

Usage:
  arena serve [flags]                 serve the web page and the API (default http://127.0.0.1:5006)
  arena worker --nats URL             play the matches of a server on other hosts, through NATS
  arena run [flags] IMAGE IMAGE...    play one match and print the result
  arena bench [flags] --bots IMAGES   play a tournament in parallel, with a live ranking and a CSV
  arena bench --sprt 0,20 --bots NEW,OLD  is NEW better than OLD? pairs of matches until a sequential test decides
  arena doctor [--json]               check the engine, cgroups and sandbox; measure round trips and starts
  arena replay verify FILE            re-run the engine on a replay's answers
  arena replay rerun FILE --seat N    run a recorded bot again on its inputs; see where it answers differently
  arena ladder show|recompute GAME    a game's leaderboard; its ratings recomputed from the history
  arena registry gc                   remove the registry's blobs no image references (server stopped)
  arena login [SERVER]                sign in to a server with accounts; keep an API token for these commands
  arena bots [SERVER]                 my bots pushed to the server's registry, and their checks
  arena submit DIR --game GAME        build a bot's folder on the server (no Docker needed) and push it
  arena draft list|pull|push          the drafts written in the page: into a folder and back
  arena contest create FILE [SERVER]  create a contest (staff); list, standings ID [--csv]
  arena users import FILE [SERVER]    make a class's accounts and teams from a roster CSV (admins)
  arena logout [SERVER]               revoke and forget the token of arena login
  arena cleanup [--all]               remove containers left by Arena runs that died
  arena backup DEST                   back up the data folder while the server runs
  arena restore SRC                   restore a backup into an empty data folder
  arena join-token [--rotate]         print the token a worker joins this server's NATS with
  arena nats --config FILE [flags]    run a NATS server (JetStream), alone or as a cluster node
  arena healthcheck [URL]             ask a running server's /healthz (exit 0 when healthy)
  arena help [COMMAND]                show help

Run 'arena help run' or 'arena help serve' for flags and settings.
`

func main() {
	hidden(os.Args)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := runMain(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// surviveBrokenPipes keeps a long-running command (serve, worker) whose
// output's reader is gone (the process that started it died) stopping as
// asked and removing its containers: a write to the closed pipe fails
// rather than ending it (Go ends a program on SIGPIPE from stdout or
// stderr unless it asks for the signal).
func surviveBrokenPipes() {
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
}

// hidden runs the commands the arena binary obeys for Arena itself, and
// exits: inside a bot's container it is the bot's launcher (nothing else
// of Arena runs there), it starts local bots inside their cgroups, and it
// is the doctor's probe and echo bot. Other arguments it leaves alone.
func hidden(args []string) {
	if len(args) < 2 {
		return
	}
	switch args[1] {
	case sandbox.LaunchCommand:
		err := sandbox.Launch(args[2:])
		fmt.Fprintln(os.Stderr, err)
		os.Exit(sandbox.LaunchExitCode)
	case sandbox.JoinCommand:
		err := sandbox.Join(args[2:])
		fmt.Fprintln(os.Stderr, err)
		os.Exit(sandbox.LaunchExitCode)
	case sandbox.ProbeCommand:
		json.NewEncoder(os.Stdout).Encode(probe.Run())
		// Stay until the doctor is done with the container (it closes
		// stdin), so that its cgroup can be read however loaded the host.
		io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	case sandbox.EchoCommand:
		if err := sandbox.Echo(os.Stdin, os.Stdout); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
}

// runMain runs one command and returns its exit code.
func runMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, mainUsage)
		return exitUsage
	}
	cmd, rest := args[0], args[1:]
	var err error
	switch cmd {
	case "run":
		err = cmdRun(ctx, rest, stdout, stderr)
	case "serve":
		err = cmdServe(ctx, rest, stdout, stderr)
	case "bench":
		err = cmdBench(ctx, rest, stdout, stderr)
	case "doctor":
		err = cmdDoctor(ctx, rest, stdout, stderr)
	case "healthcheck":
		err = cmdHealthcheck(ctx, rest, stdout)
	case "replay":
		err = cmdReplay(ctx, rest, stdout, stderr)
	case "cleanup":
		err = cmdCleanup(ctx, rest, stdout, stderr)
	case "backup":
		err = cmdBackup(ctx, rest, stdout, stderr)
	case "restore":
		err = cmdRestore(ctx, rest, stdout, stderr)
	case "ladder":
		err = cmdLadder(ctx, rest, stdout, stderr)
	case "registry":
		err = cmdRegistry(ctx, rest, stdout, stderr)
	case "login":
		err = cmdLogin(ctx, rest, stdout, stderr)
	case "logout":
		err = cmdLogout(ctx, rest, stdout, stderr)
	case "bots":
		err = cmdBots(ctx, rest, stdout, stderr)
	case "submit":
		err = cmdSubmit(ctx, rest, stdout, stderr)
	case "draft":
		err = cmdDraft(ctx, rest, stdout, stderr)
	case "contest":
		err = cmdContest(ctx, rest, stdout, stderr)
	case "users":
		err = cmdUsers(ctx, rest, stdout, stderr)
	case "worker":
		err = cmdWorker(ctx, rest, stdout, stderr)
	case "nats":
		err = cmdNATS(ctx, rest, stdout, stderr)
	case "join-token":
		err = cmdJoinToken(rest, stdout, stderr)
	case "help", "-h", "-help", "--help":
		err = cmdHelp(rest, stdout)
	default:
		err = usageErr("unknown command %q (commands: serve, worker, join-token, run, bench, doctor, replay, ladder, registry, login, bots, submit, draft, contest, users, logout, cleanup, backup, restore, nats, healthcheck, help)", cmd)
	}
	return exitCode(err, stderr)
}

// exitCode is the exit code of a command that returned err, which it
// writes to stderr.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		fmt.Fprintf(stderr, "arena: %v\n", ee.err)
		return ee.code
	}
	fmt.Fprintf(stderr, "arena: %v\n", err)
	return exitPlatform
}

func cmdHelp(args []string, stdout io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stdout, mainUsage)
		return nil
	}
	switch args[0] {
	case "run":
		fs, _, _ := runFlags(stdout)
		fs.Usage()
	case "serve":
		fs, _ := serveFlags(stdout)
		fs.Usage()
	case "bench":
		fs, _, _ := benchFlags(stdout)
		fs.Usage()
	case "doctor":
		fs, _, _, _, _ := doctorFlags(stdout)
		fs.Usage()
	case "replay":
		fmt.Fprint(stdout, replayUsage)
	case "ladder":
		fs, _ := ladderFlags(stdout)
		fs.Usage()
	case "registry":
		fs, _ := registryFlags(stdout)
		fs.Usage()
	case "login", "logout", "bots":
		fmt.Fprint(stdout, loginUsage)
	case "submit":
		fmt.Fprint(stdout, submitUsage)
	case "draft":
		fmt.Fprint(stdout, draftUsage)
	case "contest":
		fmt.Fprint(stdout, contestUsage)
	case "users":
		fmt.Fprint(stdout, usersUsage)
	case "worker":
		fs, _, _ := workerFlags(stdout)
		fs.Usage()
	case "cleanup":
		fs, _, _ := cleanupFlags(stdout)
		fs.Usage()
	case "backup", "restore":
		fs, _ := backupFlags(stdout, args[0])
		fs.Usage()
	case "join-token":
		return cmdJoinToken([]string{"-h"}, stdout, stdout)
	case "nats":
		return cmdNATS(context.Background(), []string{"-h"}, stdout, stdout)
	default:
		return usageErr("no help for %q (commands: serve, worker, join-token, nats, run, bench, doctor, replay, ladder, registry, login, bots, submit, draft, contest, users, cleanup)", args[0])
	}
	return nil
}

// parseInterspersed parses flags that may come before, between or after
// the positional arguments; everything after "--" is positional.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

func newLogger(level zapcore.Level, stderr io.Writer) *zap.Logger {
	enc := zap.NewDevelopmentEncoderConfig()
	enc.TimeKey = ""
	core := zapcore.NewCore(zapcore.NewConsoleEncoder(enc), zapcore.AddSync(stderr), level)
	return zap.New(core)
}

// connect opens the engine and checks it answers.
func connect(ctx context.Context) (*client.Client, sandbox.Owner, error) {
	cli, err := sandbox.Connect()
	if err != nil {
		return nil, sandbox.Owner{}, platformErr(fmt.Errorf("docker client: %w", err))
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := cli.Ping(pingCtx); err != nil {
		cli.Close()
		return nil, sandbox.Owner{}, platformErr(fmt.Errorf("cannot reach the Docker engine at %s: %v", cli.DaemonHost(), err))
	}
	owner, err := sandbox.Self()
	if err != nil {
		cli.Close()
		return nil, sandbox.Owner{}, platformErr(fmt.Errorf("identify this process: %w", err))
	}
	return cli, owner, nil
}

// sandboxes sets up what starts bots for arena run, serve and bench: the
// engine (reached, with what Arena runs that died left behind swept away:
// these commands, and arena cleanup, are the only ones that clean up), the
// Docker sandbox with the configured policy, runtime and stdio path, and,
// when local is set, the runner of local (exec:) bots. The caller closes
// the client.
func sandboxes(ctx context.Context, cfg Config, log *zap.Logger, stderr io.Writer, local bool, extra ...sandbox.Option) (*client.Client, *sandbox.Docker, *sandbox.Local, error) {
	cli, owner, err := connect(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	sweepLeftovers(ctx, newJanitor(cli, owner, cfg.StdioDir, log), log, stderr)
	d, l, err := runners(ctx, cfg, cli, owner, log, stderr, local, extra...)
	if err != nil {
		cli.Close()
		return nil, nil, nil, err
	}
	return cli, d, l, nil
}

// runners sets up the Docker sandbox on an engine already reached, and the
// local runner when local is set.
func runners(ctx context.Context, cfg Config, cli *client.Client, owner sandbox.Owner, log *zap.Logger, stderr io.Writer, local bool, extra ...sandbox.Option) (*sandbox.Docker, *sandbox.Local, error) {
	rt, err := runtimeOf(ctx, cli, cfg.Runtime)
	if err != nil {
		return nil, nil, err
	}
	d, err := sandbox.NewDocker(cli, cfg.Policy(), owner, append(dockerOptions(cfg, cli, rt, log, stderr), extra...)...)
	if err != nil {
		return nil, nil, usageErr("%v", err)
	}
	var l *sandbox.Local
	if local {
		exe, _ := os.Executable()
		if l, err = sandbox.NewLocal(cfg.Policy(), log, exe); err != nil {
			return nil, nil, usageErr("%v", err)
		}
	}
	return d, l, nil
}

// dockerOptions are the sandbox options every command uses: the policy's
// cgroup root, and the FIFO stdio path when it can work here.
func dockerOptions(cfg Config, cli *client.Client, rt sandbox.Runtime, log *zap.Logger, stderr io.Writer) []sandbox.Option {
	opts := []sandbox.Option{sandbox.WithLogger(log), sandbox.WithCgroupRoot(cfg.CgroupRoot), sandbox.WithRuntime(rt),
		// The uid leases live in the stdio folder, which every Arena
		// process on the machine shares, whichever stdio path it uses.
		sandbox.WithUIDFolder(sandbox.UIDFolder(cfg.StdioDir))}
	if fifo, err := fifoPath(cfg, cli, rt); err != nil {
		if cfg.Stdio != "attach" {
			warnAttach(stderr, err.Error())
			opts = append(opts, sandbox.WithAttachBecause(err.Error()))
		}
	} else {
		opts = append(opts, sandbox.WithFIFO(fifo))
	}
	return opts
}

// fifoPath prepares the FIFO stdio path, or says why it cannot be used.
func fifoPath(cfg Config, cli *client.Client, rt sandbox.Runtime) (sandbox.FIFO, error) {
	if cfg.Stdio == "attach" {
		return sandbox.FIFO{}, errors.New("ARENA_STDIO=attach")
	}
	if why := rt.StdioObstacle(); why != "" {
		return sandbox.FIFO{}, errors.New(why)
	}
	if host := cli.DaemonHost(); !strings.HasPrefix(host, "unix://") {
		return sandbox.FIFO{}, fmt.Errorf("the engine at %s is not on this machine", host)
	}
	exe, err := os.Executable()
	if err != nil {
		return sandbox.FIFO{}, err
	}
	return sandbox.PrepareFIFO(cfg.StdioDir, exe)
}

// newJanitor is this process's clean-up (sandbox.Janitor): containers of
// Arena processes on this host that are gone, and the FIFO folder stdioDir
// with this binary's launcher copy.
func newJanitor(api sandbox.CleanupAPI, owner sandbox.Owner, stdioDir string, log *zap.Logger) *sandbox.Janitor {
	exe, _ := os.Executable()
	return sandbox.NewJanitor(api, sandbox.Liveness{Self: owner, ProcRoot: "/proc"}.Alive,
		sandbox.WithStdioFolder(stdioDir, exe), sandbox.WithLocalCgroups(sandbox.LocalCgroupRoot, owner),
		sandbox.WithJanitorLogger(log))
}

// sweepLeftovers removes what Arena runs that died left behind, and says
// so: a killed run leaves nothing behind for long.
func sweepLeftovers(ctx context.Context, j *sandbox.Janitor, log *zap.Logger, stderr io.Writer) {
	rep, err := j.Sweep(ctx)
	if err != nil {
		log.Warn("clean-up of what Arena runs that died left", zap.Error(err))
	}
	if len(rep.Removed) > 0 {
		fmt.Fprintf(stderr, "arena: removed %d container(s) left by an Arena run that died: %s\n", len(rep.Removed), strings.Join(rep.Removed, ", "))
	}
}

// warnAttach says, on every command's stderr, that bots' stdio does not
// take the FIFO path, and why: answers are slower over the attach stream.
func warnAttach(stderr io.Writer, why string) {
	fmt.Fprintf(stderr, "arena: warning: bots' stdio uses the engine's attach stream, which is slower: %s\n", why)
}

// warnFallback warns when the bots of a match fell back to the attach
// stream while it was played (see warnAttach).
func warnFallback(stderr io.Writer, stdioPath string) {
	if why, ok := strings.CutPrefix(stdioPath, "attach (the FIFO path failed: "); ok {
		warnAttach(stderr, "the FIFO path failed: "+strings.TrimSuffix(why, ")"))
	}
}
