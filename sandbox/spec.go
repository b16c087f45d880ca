package sandbox

import (
	"fmt"
	"strconv"
	"strings"

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
	// Args, when set, replace the image's command (CMD); its entrypoint
	// stays.
	Args []string
}

// botContainer is a bot's container configuration under the policy,
// before a stdio path wires it (see stream.go).
type botContainer struct {
	cfg  *container.Config
	host *container.HostConfig
	// uid the bot runs as, -1 when unknown (a user name in the image).
	uid int
}

// botContainer decides a bot's container: the policy, its labels and
// environment, and its user — the image's own unless that is root, in
// which case an unprivileged uid distinct from the other running bots'.
func (d *Docker) botContainer(s Spec) botContainer {
	user := ""
	uid := -1
	if runsAsRoot(s.Image.User) {
		uid = d.policy.FallbackUID + int(d.uids.Add(1)%uint64(d.policy.UIDRange))
		user = fmt.Sprintf("%d:%d", uid, uid)
	} else if n, err := strconv.Atoi(strings.Split(s.Image.User, ":")[0]); err == nil {
		uid = n
	}
	cfg, host := containerConfig(d.policy, containerSpec{
		image: s.Image.ID,
		env:   append([]string{"ARENA_BOT_ID=" + s.BotID}, s.Env...),
		labels: map[string]string{
			LabelPlatform: "arena",
			LabelMatch:    s.MatchID,
			LabelBot:      s.BotID,
			LabelOwner:    d.owner.String(),
		},
		user:    user,
		runtime: d.policy.Runtime,
	})
	return botContainer{cfg: cfg, host: host, uid: uid}
}
