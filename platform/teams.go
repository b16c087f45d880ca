package platform

import (
	"context"
	"fmt"
	"strings"

	"go.uber.org/zap"

	"arena/accounts"
	"arena/store"
)

// Teams: a user's teams and invitations, making one (its name is not the
// operator's), inviting (the person invited is told, as caused by the
// one who invites: NotifyConfig.FromOthersPerHour), joining (the team's
// ladder entries count for the new member from then on) and leaving.
// Package accounts keeps the rules of membership.

// TeamsView are a user's teams and the teams they are invited into.
type TeamsView struct {
	Teams       []store.Team
	Invitations []string
}

// Teams are p's teams and invitations.
func (pp *People) Teams(ctx context.Context, p accounts.Principal) (TeamsView, error) {
	out := TeamsView{Teams: []store.Team{}, Invitations: []string{}}
	if _, err := pp.accounts(); err != nil {
		return out, err
	}
	if err := signedIn(p, "see your teams"); err != nil {
		return out, err
	}
	for _, name := range p.Teams {
		t, err := pp.p.deps.Store.Team(ctx, name)
		if err != nil {
			return out, err
		}
		out.Teams = append(out.Teams, t)
	}
	var err error
	out.Invitations, err = pp.Invitations(ctx, p)
	return out, err
}

// CreateTeam makes a team with p as its first member, and returns it.
func (pp *People) CreateTeam(ctx context.Context, p accounts.Principal, name string) (store.Team, error) {
	a, err := pp.accounts()
	if err != nil {
		return store.Team{}, err
	}
	name = strings.TrimSpace(name)
	if err := pp.p.operatorNamespace(ctx, name); err != nil {
		return store.Team{}, err
	}
	if err := a.CreateTeam(ctx, p, name); err != nil {
		return store.Team{}, err
	}
	return pp.p.deps.Store.Team(ctx, name)
}

// Team is a team of p's (any, for an admin).
func (pp *People) Team(ctx context.Context, p accounts.Principal, name string) (store.Team, error) {
	a, err := pp.accounts()
	if err != nil {
		return store.Team{}, err
	}
	return a.Team(ctx, p, name)
}

// InviteMember has p invite user into team, tells user, and returns the
// team.
func (pp *People) InviteMember(ctx context.Context, p accounts.Principal, team, user string) (store.Team, error) {
	a, err := pp.accounts()
	if err != nil {
		return store.Team{}, err
	}
	user = strings.TrimSpace(user)
	if err := a.InviteMember(ctx, p, team, user); err != nil {
		return store.Team{}, err
	}
	pp.p.tell(ctx, Note{User: user, Kind: NotifyTeamInvite, By: p.Name,
		Text:   fmt.Sprintf("%s invites you into team %s: accept or decline on your account page.", p.Name, team),
		Link:   "#/account",
		Fields: map[string]any{"team": team, "by": p.Name}})
	return pp.p.deps.Store.Team(ctx, team)
}

// JoinTeam has p accept an invitation into team, and returns the team.
// Its ladder entries count for p from now on: those past the count are
// paused (ladder.PauseOverCount).
func (pp *People) JoinTeam(ctx context.Context, p accounts.Principal, team string) (store.Team, error) {
	a, err := pp.accounts()
	if err != nil {
		return store.Team{}, err
	}
	if err := a.Join(ctx, p, team); err != nil {
		return store.Team{}, err
	}
	if err := pp.p.ladder.PauseOverCount(ctx); err != nil {
		pp.p.log.Error("pause the ladder entries over the count", zap.Error(err))
	}
	return pp.p.deps.Store.Team(ctx, team)
}

// RemoveMember takes user out of team: the user themself (leaving, or
// declining an invitation), another member, or an admin.
func (pp *People) RemoveMember(ctx context.Context, p accounts.Principal, team, user string) error {
	a, err := pp.accounts()
	if err != nil {
		return err
	}
	return a.RemoveMember(ctx, p, team, user)
}
