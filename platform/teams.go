package platform

import (
	"context"
	"fmt"

	"go.uber.org/zap"

	"arena/accounts"
	"arena/internal/errs"
)

// Teams: what changes a team's members beyond the accounts' rules
// (package accounts): the person invited is told, as caused by the one
// who invites (NotifyConfig.FromOthersPerHour).

// InviteMember has p invite user into team, and tells user.
func (s *Platform) InviteMember(ctx context.Context, p accounts.Principal, team, user string) error {
	if s.deps.Accounts == nil {
		return errs.New(errs.ErrNotFound, "this server has no accounts (local mode)")
	}
	if err := s.deps.Accounts.InviteMember(ctx, p, team, user); err != nil {
		return err
	}
	s.tell(ctx, Note{User: user, Kind: NotifyTeamInvite, By: p.Name,
		Text:   fmt.Sprintf("%s invites you into team %s: accept or decline on your account page.", p.Name, team),
		Link:   "#/account",
		Fields: map[string]any{"team": team, "by": p.Name}})
	return nil
}

// JoinTeam has p accept an invitation into team. The team's ladder
// entries count for p from now on: those past the count are paused
// (ladder.PauseOverCount).
func (s *Platform) JoinTeam(ctx context.Context, p accounts.Principal, team string) error {
	if s.deps.Accounts == nil {
		return errs.New(errs.ErrNotFound, "this server has no accounts (local mode)")
	}
	if err := s.deps.Accounts.Join(ctx, p, team); err != nil {
		return err
	}
	if err := s.ladder.PauseOverCount(ctx); err != nil {
		s.log.Error("pause the ladder entries over the count", zap.Error(err))
	}
	return nil
}
