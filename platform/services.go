package platform

import (
	"arena/accounts"
	"arena/internal/errs"
)

// The services: the platform's use cases, one type per domain. Each
// checks who may do what (an accounts.Principal, as the front end knows
// them) and reads its own lists; a front end (web, a CLI command, a
// future adapter) calls them and nothing beneath them. They are types of
// one package because they share one match queue, one record of what it
// plays and the pins of the images it plays: a package each would have
// to hand those to one another behind interfaces in both directions (a
// pushed version's check submits a match; a match pins a pushed version).
// The Platform itself builds them, starts and stops their loops, and
// keeps that shared core unexported.

// Services are the platform's services, for a front end.
type Services struct {
	Matches       *Matches
	Challenges    *Challenges
	Ladders       *Ladders
	Contests      *Contests
	Registry      *Registry
	Drafts        *Drafts
	People        *People
	Games         *Games
	Notifications *Notifications
	Site          *Site
}

// Matches are matches started by hand and their records: starting and
// cancelling one, the list, a match and its replay, the live view, the
// seats people play, the images one may play (matches.go, seats.go,
// images.go).
type Matches struct{ p *Platform }

// Challenges are a bot against another's, for a number of games
// (challenges.go).
type Challenges struct{ p *Platform }

// Ladders are the games' ladders: registering a bot, the boards and
// entries, changing an entry (ladders.go).
type Ladders struct{ p *Platform }

// Contests are the contests: their settings, entries, final, standings,
// the class and the grades for staff (contests.go).
type Contests struct{ p *Platform }

// Registry is the registry's side people see: their pushed versions and
// quotas, deleting a repository, the garbage collection, builds from
// uploads, the similarity report (registry.go, builds.go,
// similarity.go). The OCI registry itself is an HTTP adapter
// (Platform.RegistryHandler).
type Registry struct{ p *Platform }

// Drafts are the bots people write in the page, kept on the server with
// their last saves; the kits' starters they begin from (drafts.go).
type Drafts struct{ p *Platform }

// People are the accounts: signing up and in, tokens, teams, the
// admins' lists, a class's roster, sign-up invitations and password
// links (people.go, teams.go, names.go).
type People struct{ p *Platform }

// Games are the games on offer: the built-in ones and the logic games
// admins register, their players' pages (games.go).
type Games struct{ p *Platform }

// Notifications are a person's notifications and webhook (notify.go).
type Notifications struct{ p *Platform }

// Site is the server as a whole: the names it answers to, its disk
// (site.go).
type Site struct{ p *Platform }

// initServices makes the services.
func (s *Platform) initServices() {
	s.services = Services{
		Matches: &Matches{s}, Challenges: &Challenges{s}, Ladders: &Ladders{s}, Contests: &Contests{s},
		Registry: &Registry{s}, Drafts: &Drafts{s}, People: &People{s}, Games: &Games{s}, Notifications: &Notifications{s}, Site: &Site{s},
	}
}

// Services are the platform's services.
func (s *Platform) Services() Services { return s.services }

// staff refuses anyone but the staff, who are the admins, saying what
// only they may do.
func staff(p accounts.Principal, what string) error {
	switch {
	case !p.SignedIn():
		return errs.Errorf(errs.ErrUnauthenticated, "sign in as an admin to %s", what)
	case !p.Admin():
		return errs.Errorf(errs.ErrDenied, "only an admin may %s", what)
	}
	return nil
}

// signedIn refuses a visitor nobody knows, saying what they would do.
func signedIn(p accounts.Principal, what string) error {
	if !p.SignedIn() {
		return errs.Errorf(errs.ErrUnauthenticated, "sign in to %s", what)
	}
	return nil
}
