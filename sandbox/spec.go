package sandbox

import (
	"fmt"
	"strconv"

	"github.com/docker/docker/api/types/container"

	"arena/framing"
)

// Spec is one bot to start.
type Spec struct {
	Image   Image
	Name    string // container name; empty lets the engine choose
	MatchID string
	BotID   string
	Env     []string // extra environment, KEY=value
	Framing framing.Framing
	// MaxMessageBytes caps one message on stdout.
	MaxMessageBytes int
	// MemoryBytes is this bot's memory limit (0: the policy's), swap
	// disabled as the policy's is.
	MemoryBytes int64
	// NanoCPUs is its CPU quota (0: the policy's; a local process keeps
	// the policy's).
	NanoCPUs int64
	// Args, when set, replace the image's command (CMD); its entrypoint
	// stays.
	Args []string
}

// botContainer is a bot's container configuration under the policy,
// before a stdio path wires it (see stream.go).
type botContainer struct {
	cfg  *container.Config
	host *container.HostConfig
	// uid the bot runs as, its own among the running bots (see uids.go).
	uid int
}

// botContainer decides a bot's container: the policy, its labels and
// environment, and its user: the uid leased, whatever the image says.
func (d *Docker) botContainer(s Spec, uid int) botContainer {
	cfg, host := containerConfig(d.policy.forSpec(s), containerSpec{
		image: s.Image.ID,
		env:   append([]string{"ARENA_BOT_ID=" + s.BotID}, s.Env...),
		labels: map[string]string{
			LabelPlatform: "arena",
			LabelMatch:    s.MatchID,
			LabelBot:      s.BotID,
			LabelOwner:    d.owner.String(),
			LabelUID:      strconv.Itoa(uid),
		},
		user:    fmt.Sprintf("%d:%d", uid, uid),
		runtime: d.runtime,
		volumes: s.Image.Volumes,
	})
	return botContainer{cfg: cfg, host: host, uid: uid}
}
