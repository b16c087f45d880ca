// Package sandbox runs one bot: a hardened Docker container (Docker) or,
// for development, a local process (Local), with its stdin, stdout and
// stderr, its limits, its CPU and memory figures, and the clean-up of what
// it leaves. It knows nothing of games: a bot is a stream of messages with
// deadlines. SECURITY.md states the policy and the tests that prove it.
//
// Where each decision lives:
//
//   - policy.go: the hardening and the limits (Policy, DefaultPolicy,
//     Validate), and how they become a container's configuration
//     (containerConfig, pure, tested without an engine): the writable
//     places (/tmp, /dev/shm, the image's volumes), each a bounded tmpfs.
//   - spec.go: one bot to start (Spec) and its container before a stdio
//     path wires it: labels, environment, and its user.
//   - uids.go: the uid each running bot has to itself, whatever its image
//     says, leased across every Arena process on the machine.
//   - docker.go: the Docker runner and its options (NewDocker, Option), the
//     few client methods the package calls (DockerAPI), Connect.
//   - image.go: image references (ErrBadReference, imageref.ErrBad), the
//     local lookup (Docker.Image), the pull only WithPullMissing allows, and
//     the not-found error (ErrImageNotFound, ImageNotFoundError).
//   - container.go: a container's lifecycle (Container): create, wait,
//     then start (Docker.Start); Stop, Exit and Close; the removal of what a
//     failed start created; how a bot ended (Exit: OOM from the cgroup
//     first, the engine's flag second).
//   - stream.go: the two stdio paths behind one interface (stream), and the
//     one choice between them (Docker.create): FIFOs while they work; when
//     the engine cannot create a container with them, the attach stream
//     from then on, with the reason in StdioPath.
//   - fifo.go: the FIFO path: its set-up (PrepareFIFO, the launcher copy),
//     a bot's FIFO folder, its pumps and its keep-alive ends. launch.go:
//     the launcher that runs in the bot's container (Launch).
//   - attach.go: the engine's attach stream.
//   - stdio.go: the message level every runner shares: stdout split into
//     messages stamped with their arrival (framer), deadlines on Send and
//     Receive, the stderr caps; ErrTimeout, ErrClosed, ErrOutputLimit.
//   - cgroup.go: CPU time, memory peak, OOM kills and refused forks, read
//     from the bot's own cgroup (v1 or v2, found from its process).
//   - local.go: local (exec:) bots, in a cgroup of their own with the
//     policy's limits when Arena may create one.
//   - labels.go: the labels on every container; who owns one (Owner) and
//     whether that process still runs (Liveness).
//   - janitor.go: the clean-up policy (Janitor): which containers are
//     leftovers (their owner is gone), one match's containers, all of them;
//     FIFO folders and launcher copies by age. Which commands run it is
//     cmd/arena's choice (serve, run and bench at start-up, cleanup on
//     demand; no other).
//   - lifecycle.go: the bare container lifecycle, the baseline of
//     arena bench --baseline (Docker.Lifecycle).
//   - probe.go: the image arena doctor runs (the arena binary alone) and
//     its echo. The probe's report is package arena/sandbox/probe, shared
//     with the hostile test bot and free of anything but the standard
//     library.
package sandbox
