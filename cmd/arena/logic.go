package main

import (
	"context"
	"fmt"

	"github.com/docker/docker/client"

	"arena/engine"
	"arena/judger"
	"arena/orchestrator"
)

// servedGames are the games a server offers: the built-in ones, then the
// logic games its operator registered (ARENA_GAMES), each checked on the
// engine now: its image there, its labels those of a Saiblo logic.
func servedGames(ctx context.Context, cli *client.Client, logic []LogicGame) ([]engine.Game, error) {
	all := games()
	for _, lg := range logic {
		info, err := cli.ImageInspect(ctx, lg.Image)
		if err != nil {
			return nil, fmt.Errorf("ARENA_GAMES: game %s: its logic image %s: %v (build it, or docker pull it, first)", lg.Name, lg.Image, err)
		}
		var labels map[string]string
		if info.Config != nil {
			labels = info.Config.Labels
		}
		players, err := judger.CheckLabels(labels)
		if err != nil {
			return nil, fmt.Errorf("ARENA_GAMES: game %s: the image %s: %v", lg.Name, lg.Image, err)
		}
		all = append(all, judger.Named(lg.Name, lg.Image, players))
	}
	return all, nil
}

// logicRouter plays a logic game's matches in this process, with the
// server's own orchestrator, and every other match with next (the
// dispatcher): a logic's replay can be checked only by playing the logic
// again, so the server believes no other host's.
type logicRouter struct {
	next  orchestrator.Player
	local *orchestrator.Orchestrator
}

func (r logicRouter) Play(ctx context.Context, req orchestrator.Request) (*orchestrator.Replay, error) {
	if _, ok := req.Game.(engine.Hosted); ok {
		return r.local.Play(ctx, req)
	}
	return r.next.Play(ctx, req)
}
