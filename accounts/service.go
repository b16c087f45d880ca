package accounts

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/alexedwards/argon2id"
	"go.uber.org/zap"

	"arena/internal/errs"
	"arena/internal/keyrate"
	"arena/store"
)

// Params are the argon2id parameters of new password hashes: OWASP's
// (19 MiB, 2 passes, 1 lane). A hash keeps its own, so changing them
// leaves old passwords working.
var Params = &argon2id.Params{Memory: 19 * 1024, Iterations: 2, Parallelism: 1, SaltLength: 16, KeyLength: 32}

// Signup modes (ARENA_SIGNUP).
const (
	SignupOpen   = "open"   // anyone may make an account
	SignupInvite = "invite" // with an admin's invitation (the default)
	SignupClosed = "closed" // only an admin makes accounts
)

// InviteLifetime is how long a sign-up invitation may be used.
const InviteLifetime = 7 * 24 * time.Hour

// Service is the accounts of a server.
type Service struct {
	store  *store.Store
	signup string
	now    func() time.Time
	log    *zap.Logger
	limits *limits
	// hashing bounds the argon2id hashes computed at once (each takes
	// Params.Memory): a flood of sign-ins queues, it does not exhaust
	// the host's memory.
	hashing chan struct{}
	// dummy is a hash compared against when an account does not exist,
	// so a wrong name costs as long as a wrong password.
	dummy string
	// teamsPerUser bounds the teams a user makes (0: no bound).
	teamsPerUser int
	// teamChanges bounds the invitations and removals one user makes
	// (nil: no bound).
	teamChanges        *keyrate.Limits
	teamChangesPerHour int
}

// Option configures a Service.
type Option func(*Service)

// WithClock sets the clock (sign-in limits, invitations, records).
func WithClock(now func() time.Time) Option { return func(s *Service) { s.now = now } }

// WithLogger sets the logger.
func WithLogger(l *zap.Logger) Option { return func(s *Service) { s.log = l } }

// WithLimits sets the sign-in limits (zero fields: the defaults).
func WithLimits(l Limits) Option { return func(s *Service) { s.limits = newLimits(l) } }

// DefaultTeamsPerUser is how many teams a user may make unless
// WithTeamsPerUser says otherwise.
const DefaultTeamsPerUser = 5

// WithTeamsPerUser sets how many teams a user may make (each team has
// quotas of its own); 0: no bound. Admins make teams without bound.
func WithTeamsPerUser(n int) Option { return func(s *Service) { s.teamsPerUser = n } }

// DefaultTeamChangesPerHour is how many invitations and removals of
// others a user may make an hour unless WithTeamChanges says otherwise.
const DefaultTeamChangesPerHour = 30

// WithTeamChanges sets how many invitations into teams and removals of
// others from them one user may make an hour (0: no bound). Each
// invitation tells someone; admins are not bounded.
func WithTeamChanges(perHour int) Option {
	return func(s *Service) { s.teamChanges, s.teamChangesPerHour = keyrate.PerHour(perHour), perHour }
}

// New returns the accounts of st under a sign-up mode.
func New(st *store.Store, signup string, opts ...Option) (*Service, error) {
	switch signup {
	case SignupOpen, SignupInvite, SignupClosed:
	default:
		return nil, errs.Errorf(errs.ErrInvalid, "sign-up mode %q: want open, invite or closed", signup)
	}
	s := &Service{store: st, signup: signup, now: time.Now, log: zap.NewNop(), hashing: make(chan struct{}, max(1, runtime.NumCPU())), teamsPerUser: DefaultTeamsPerUser,
		teamChanges: keyrate.PerHour(DefaultTeamChangesPerHour), teamChangesPerHour: DefaultTeamChangesPerHour}
	for _, o := range opts {
		o(s)
	}
	if s.limits == nil {
		s.limits = newLimits(Limits{})
	}
	var err error
	if s.dummy, err = argon2id.CreateHash("not a password of anyone's", Params); err != nil {
		return nil, err
	}
	return s, nil
}

// Signup is the sign-up mode.
func (s *Service) Signup() string { return s.signup }

var namePattern = regexp.MustCompile(`^[a-z0-9]+(?:[_-][a-z0-9]+)*$`)

// PlatformName is the name the platform's own registry credential goes
// by (registry.PlatformUser): no account or team may take it.
const PlatformName = "arena-platform"

// reserved are names no one may take: the admin's (ARENA_ADMIN_PASSWORD
// makes it), the platform's, the example bots' namespace, Docker's, and
// the words the page and the API use for themselves.
var reserved = []string{AdminName, PlatformName, "arena", "arena-test", "library", "docker", "root", "system", "platform", "anonymous", "me", "mine", "everyone", "api", "v2", "team", "teams", "user", "users", "ladder", "ladders", "registry"}

// CheckName says why a user or team name is not acceptable: 2 to 32
// lower-case letters, digits, and single dashes or underscores between
// them — the first component of an image's path (NAME/bot).
func CheckName(name string) error {
	if len(name) < 2 || len(name) > 32 || !namePattern.MatchString(name) {
		return errs.Errorf(errs.ErrInvalid, "name %q: 2 to 32 lower-case letters and digits, with single dashes or underscores between them (it names your images: NAME/bot)", name)
	}
	if slices.Contains(reserved, name) {
		return errs.Errorf(errs.ErrInvalid, "name %q is reserved", name)
	}
	return nil
}

// CheckPassword says why a password is not acceptable: at least 8
// characters, at most 256 bytes, not the name.
func CheckPassword(name, password string) error {
	switch {
	case utf8.RuneCountInString(password) < 8:
		return errs.Errorf(errs.ErrInvalid, "password: at least 8 characters")
	case len(password) > 256:
		return errs.Errorf(errs.ErrInvalid, "password: at most 256 bytes")
	case strings.EqualFold(password, name):
		return errs.Errorf(errs.ErrInvalid, "password: not the account's name")
	}
	return nil
}

// hash computes a password's argon2id hash, at most as many at once as
// the host has CPUs.
func (s *Service) hash(ctx context.Context, password string) (string, error) {
	if err := s.acquire(ctx); err != nil {
		return "", err
	}
	defer s.release()
	return argon2id.CreateHash(password, Params)
}

func (s *Service) compare(ctx context.Context, password, hash string) (bool, error) {
	if err := s.acquire(ctx); err != nil {
		return false, err
	}
	defer s.release()
	return argon2id.ComparePasswordAndHash(password, hash)
}

func (s *Service) acquire(ctx context.Context) error {
	select {
	case s.hashing <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *Service) release() { <-s.hashing }

// SignUp makes a player's account. by is who asks: an admin makes
// accounts whatever the mode; anyone else needs the mode to allow it
// (open, or invite with an unused invitation code).
func (s *Service) SignUp(ctx context.Context, by Principal, name, password, invite string) (store.User, error) {
	if err := CheckName(name); err != nil {
		return store.User{}, err
	}
	if err := CheckPassword(name, password); err != nil {
		return store.User{}, err
	}
	inviteHash := ""
	switch {
	case by.Admin():
	case s.signup == SignupClosed:
		return store.User{}, errs.Errorf(errs.ErrDenied, "sign-up is closed here: ask an admin for an account")
	case s.signup == SignupInvite && invite == "":
		return store.User{}, errs.Errorf(errs.ErrDenied, "sign-up needs an invitation here: ask an admin for an invitation link")
	case s.signup == SignupInvite:
		inviteHash = Digest(invite)
	}
	h, err := s.hash(ctx, password)
	if err != nil {
		return store.User{}, err
	}
	u := store.User{Name: name, Password: h, Role: RolePlayer, CreatedAt: s.now()}
	switch err := s.store.CreateUser(ctx, u, inviteHash); {
	case errors.Is(err, store.ErrNameInUse):
		return store.User{}, errs.Errorf(errs.ErrConflict, "the name %s is taken", name)
	case errors.Is(err, store.ErrInviteUsed):
		return store.User{}, errs.Errorf(errs.ErrDenied, "the invitation is unknown, used or expired: ask an admin for a new one")
	case err != nil:
		return store.User{}, err
	}
	s.log.Info("account made", zap.String("user", name), zap.String("by", by.Name))
	return s.store.User(ctx, name) // as stored: its epoch, for a session

}

// SignIn checks a name and password from a client (its address), within
// the sign-in limits: past them it fails with a *TooManyError, before
// any password is compared (each attempt counts as a failure until its
// password is found right). Every failure says the same, whether the
// name exists or not.
func (s *Service) SignIn(ctx context.Context, name, password, client string) (store.User, error) {
	done, err := s.limits.attempt(name, client, s.now())
	if err != nil {
		return store.User{}, err
	}
	u, err := s.store.User(ctx, name)
	if err != nil && !errors.Is(err, store.ErrNoUser) {
		return store.User{}, err
	}
	hash := u.Password
	if err != nil {
		hash = s.dummy
	}
	ok, cerr := s.compare(ctx, password, hash)
	if cerr != nil && ctx.Err() != nil {
		return store.User{}, cerr
	}
	if err != nil || !ok || cerr != nil || u.Disabled {
		s.log.Info("sign-in refused", zap.String("user", name), zap.String("client", client))
		return store.User{}, errs.Errorf(errs.ErrUnauthenticated, "wrong name or password")
	}
	done(true)
	return u, nil
}

// ChangePassword replaces a user's password after checking the old one
// (within the sign-in limits, as signing in). Every session made before
// ends; it returns the account's new epoch for the session that asked.
func (s *Service) ChangePassword(ctx context.Context, name, old, new, client string) (int64, error) {
	if err := CheckPassword(name, new); err != nil {
		return 0, err
	}
	if _, err := s.SignIn(ctx, name, old, client); err != nil {
		if errs.IsUnauthenticated(err) {
			return 0, errs.Errorf(errs.ErrDenied, "the current password is wrong")
		}
		return 0, err
	}
	h, err := s.hash(ctx, new)
	if err != nil {
		return 0, err
	}
	epoch, err := s.store.SetPassword(ctx, name, h)
	if err == nil {
		s.log.Info("password changed", zap.String("user", name))
	}
	return epoch, err
}

// EnsureAdmin makes the admin account with this password, or gives the
// existing one this password and the admin role (ARENA_ADMIN_PASSWORD).
func (s *Service) EnsureAdmin(ctx context.Context, password string) error {
	if err := CheckPassword(AdminName, password); err != nil {
		return fmt.Errorf("ARENA_ADMIN_PASSWORD: %w", err)
	}
	u, err := s.store.User(ctx, AdminName)
	if err == nil && u.Role == RoleAdmin && !u.Disabled {
		if ok, _ := s.compare(ctx, password, u.Password); ok {
			return nil // as it is: its sessions go on
		}
	}
	h, err := s.hash(ctx, password)
	if err != nil {
		return err
	}
	return s.store.UpsertAdmin(ctx, AdminName, h, s.now())
}

// Principal is the principal of a user known by via (a session of
// epoch, or a token), with their role and teams as they are now: a
// disabled account, or a session older than the last password change,
// is nobody (errs.ErrUnauthenticated).
func (s *Service) Principal(ctx context.Context, name, via string, epoch int64) (Principal, error) {
	u, err := s.store.User(ctx, name)
	if errors.Is(err, store.ErrNoUser) {
		return Anonymous, errs.Errorf(errs.ErrUnauthenticated, "the account %s no longer exists", name)
	}
	if err != nil {
		return Anonymous, err
	}
	if u.Disabled {
		return Anonymous, errs.Errorf(errs.ErrUnauthenticated, "the account %s is disabled", name)
	}
	if via == ViaSession && epoch != u.Epoch {
		return Anonymous, errs.Errorf(errs.ErrUnauthenticated, "the session ended (the password was changed): sign in again")
	}
	teams, err := s.store.TeamsOf(ctx, name, store.MemberIn)
	if err != nil {
		return Anonymous, err
	}
	return Principal{Name: u.Name, Role: u.Role, Teams: teams, Via: via}, nil
}

// secret makes a random code with a prefix that says what it is.
func secret(prefix string) (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return prefix + base64.RawURLEncoding.EncodeToString(b), nil
}

// Digest is how a token or invitation code is kept: its SHA-256. The
// codes are 256 random bits, so a plain hash is enough (a password hash
// would only slow every request down).
func Digest(code string) string {
	sum := sha256.Sum256([]byte(code))
	return hex.EncodeToString(sum[:])
}

// TokenPrefix starts every API token: a token in a log or a paste is
// recognisable as one.
const TokenPrefix = "arena_"

// CreateToken makes an API token of the user's: the token is returned
// once and kept only as its digest.
func (s *Service) CreateToken(ctx context.Context, p Principal, name string) (store.Token, string, error) {
	name = strings.TrimSpace(name)
	if name == "" || utf8.RuneCountInString(name) > 64 {
		return store.Token{}, "", errs.Errorf(errs.ErrInvalid, "token name: 1 to 64 characters, to tell your tokens apart")
	}
	tok, err := secret(TokenPrefix)
	if err != nil {
		return store.Token{}, "", err
	}
	t, err := s.store.CreateToken(ctx, p.Name, name, Digest(tok), s.now())
	if err != nil {
		return store.Token{}, "", err
	}
	s.log.Info("token made", zap.String("user", p.Name), zap.Int64("token", t.ID))
	return t, tok, nil
}

// ByToken is the principal an API token acts for.
func (s *Service) ByToken(ctx context.Context, token string) (Principal, error) {
	t, err := s.store.TokenByHash(ctx, Digest(token), s.now())
	if errors.Is(err, store.ErrNoToken) {
		return Anonymous, errs.Errorf(errs.ErrUnauthenticated, "the token is unknown or revoked")
	}
	if err != nil {
		return Anonymous, err
	}
	p, err := s.Principal(ctx, t.User, ViaToken, 0)
	p.TokenID = t.ID
	return p, err
}

// RevokeToken revokes one of the user's tokens.
func (s *Service) RevokeToken(ctx context.Context, p Principal, id int64) error {
	if err := s.store.RevokeToken(ctx, p.Name, id, s.now()); errors.Is(err, store.ErrNoToken) {
		return errs.Errorf(errs.ErrNotFound, "%s has no token %d that is not revoked", p.Name, id)
	} else if err != nil {
		return err
	}
	s.log.Info("token revoked", zap.String("user", p.Name), zap.Int64("token", id))
	return nil
}

// InvitePrefix starts every sign-up invitation code.
const InvitePrefix = "invite_"

// InviteUsable says whether an invitation code can still be used: known,
// not used, not expired.
func (s *Service) InviteUsable(ctx context.Context, code string) (bool, error) {
	if !strings.HasPrefix(code, InvitePrefix) {
		return false, nil
	}
	return s.store.InviteUsable(ctx, Digest(code), s.now())
}

// CreateInvite makes a single-use sign-up invitation (an admin's): the
// code is returned once.
func (s *Service) CreateInvite(ctx context.Context, by Principal) (store.Invite, string, error) {
	code, err := secret(InvitePrefix)
	if err != nil {
		return store.Invite{}, "", err
	}
	now := s.now()
	in, err := s.store.CreateInvite(ctx, Digest(code), by.Name, now, now.Add(InviteLifetime))
	return in, code, err
}

// CreateTeam makes a team with p as its first member: a user makes at
// most WithTeamsPerUser teams (every team they made counts, whoever is
// in it now); an admin, any number.
func (s *Service) CreateTeam(ctx context.Context, p Principal, name string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	limit := s.teamsPerUser
	if p.Admin() {
		limit = 0
	}
	switch err := s.store.CreateTeam(ctx, name, p.Name, s.now(), limit); {
	case errors.Is(err, store.ErrNameInUse):
		return errs.Errorf(errs.ErrConflict, "the name %s is taken", name)
	case errors.Is(err, store.ErrTeamLimit):
		return errs.Errorf(errs.ErrDenied, "you have made %d teams, the most one may (ARENA_TEAMS_PER_USER): ask an admin for another", limit)
	case err != nil:
		return err
	}
	s.log.Info("team made", zap.String("team", name), zap.String("by", p.Name))
	return nil
}

// Team returns a team, for its members and admins (errs.ErrNotFound for
// anyone else, who need not know it exists beyond its name).
func (s *Service) Team(ctx context.Context, p Principal, name string) (store.Team, error) {
	t, err := s.store.Team(ctx, name)
	if errors.Is(err, store.ErrNoUser) {
		return store.Team{}, errs.Errorf(errs.ErrNotFound, "no team %s", name)
	}
	if err != nil {
		return store.Team{}, err
	}
	if !p.Admin() && !slices.ContainsFunc(t.Members, func(m store.Member) bool { return m.User == p.Name }) {
		return store.Team{}, errs.Errorf(errs.ErrNotFound, "no team %s of yours", name)
	}
	return t, nil
}

// InviteMember invites a user into a team; members (and admins) may.
func (s *Service) InviteMember(ctx context.Context, p Principal, team, user string) error {
	if !p.Admin() && !slices.Contains(p.Teams, team) {
		return errs.Errorf(errs.ErrDenied, "only members of team %s invite people into it", team)
	}
	if _, err := s.store.Team(ctx, team); errors.Is(err, store.ErrNoUser) {
		return errs.Errorf(errs.ErrNotFound, "no team %s", team)
	} else if err != nil {
		return err
	}
	if _, err := s.store.User(ctx, user); errors.Is(err, store.ErrNoUser) {
		return errs.Errorf(errs.ErrNotFound, "no account %s", user)
	} else if err != nil {
		return err
	}
	if err := s.teamChange(p); err != nil {
		return err
	}
	return s.store.InviteMember(ctx, team, user, p.Name, s.now())
}

// teamChange takes one of p's team changes for the hour (an invitation,
// or a removal of another), or says how long to wait.
func (s *Service) teamChange(p Principal) error {
	if p.Admin() {
		return nil
	}
	if wait := s.teamChanges.Take(p.Name, s.now()); wait > 0 {
		return errs.TooMany(fmt.Errorf("%s has made %d changes of team members in the last hour (invitations and removals), the most one may (ARENA_TEAM_CHANGES_PER_HOUR): try again in %s",
			p.Name, s.teamChangesPerHour, wait.Round(time.Second)), wait)
	}
	return nil
}

// Join accepts p's invitation into a team.
func (s *Service) Join(ctx context.Context, p Principal, team string) error {
	if err := s.store.AcceptInvitation(ctx, team, p.Name); errors.Is(err, store.ErrNoUser) {
		return errs.Errorf(errs.ErrNotFound, "you are not invited into team %s", team)
	} else if err != nil {
		return err
	}
	s.log.Info("team joined", zap.String("team", team), zap.String("user", p.Name))
	return nil
}

// RemoveMember takes a user out of a team: the user themself (leaving,
// or declining an invitation), another member, or an admin.
func (s *Service) RemoveMember(ctx context.Context, p Principal, team, user string) error {
	if !p.Admin() && p.Name != user && !slices.Contains(p.Teams, team) {
		return errs.Errorf(errs.ErrDenied, "only members of team %s take people out of it", team)
	}
	if p.Name != user {
		// Leaving, or declining, is never bounded.
		if err := s.teamChange(p); err != nil {
			return err
		}
	}
	switch err := s.store.RemoveMember(ctx, team, user); {
	case errors.Is(err, store.ErrNoUser):
		return errs.Errorf(errs.ErrNotFound, "%s is not in team %s", user, team)
	case errors.Is(err, store.ErrNameInUse):
		return errs.Errorf(errs.ErrConflict, "%s is the last member of team %s: a team keeps one", user, team)
	case err != nil:
		return err
	}
	s.log.Info("team member removed", zap.String("team", team), zap.String("user", user), zap.String("by", p.Name))
	return nil
}

// SetUser changes an account's role or disables it (an admin's); the
// admin account itself stays an enabled admin.
func (s *Service) SetUser(ctx context.Context, name, role string, disabled bool) error {
	if role != RoleAdmin && role != RolePlayer {
		return errs.Errorf(errs.ErrInvalid, "role %q: want admin or player", role)
	}
	if name == AdminName && (role != RoleAdmin || disabled) {
		return errs.Errorf(errs.ErrConflict, "the %s account stays an enabled admin", AdminName)
	}
	if err := s.store.UpdateUser(ctx, name, role, disabled); errors.Is(err, store.ErrNoUser) {
		return errs.Errorf(errs.ErrNotFound, "no account %s", name)
	} else if err != nil {
		return err
	}
	s.log.Info("account changed", zap.String("user", name), zap.String("role", role), zap.Bool("disabled", disabled))
	return nil
}
