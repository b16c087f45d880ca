package store

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestLogicGamesAreKept(t *testing.T) {
	s, ctx := openTest(t), context.Background()
	at := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	if err := s.AddLogicGame(ctx, LogicGame{Name: "ttt", Image: "kit/ttt-logic", AddedBy: "admin", AddedAt: at}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddLogicGame(ctx, LogicGame{Name: "go9", Image: "kit/go-logic", ImageID: "sha256:abc", Limits: `{"round_ms":2000}`, AddedBy: "ana", AddedAt: at.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	err := s.AddLogicGame(ctx, LogicGame{Name: "ttt", Image: "other/logic", AddedBy: "admin", AddedAt: at})
	if !errors.Is(err, ErrGameExists) {
		t.Fatalf("the same name again: %v, want ErrGameExists", err)
	}
	games, err := s.LogicGames(ctx)
	if err != nil || len(games) != 2 || games[0].Name != "ttt" || games[0].Image != "kit/ttt-logic" || games[1].AddedBy != "ana" || !games[0].AddedAt.Equal(at) ||
		games[0].ImageID != "" || games[1].ImageID != "sha256:abc" || games[1].Limits != `{"round_ms":2000}` {
		t.Fatalf("games %+v (%v)", games, err)
	}
	if ok, err := s.RemoveLogicGame(ctx, "ttt"); !ok || err != nil {
		t.Fatalf("remove ttt: %v %v", ok, err)
	}
	if ok, err := s.RemoveLogicGame(ctx, "ttt"); ok || err != nil {
		t.Fatalf("remove ttt again: %v %v, want nothing removed", ok, err)
	}
	if games, _ := s.LogicGames(ctx); len(games) != 1 || games[0].Name != "go9" {
		t.Fatalf("after removing ttt: %+v", games)
	}
}
