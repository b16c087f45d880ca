package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/distribution/distribution/v3/configuration"
	"github.com/docker/go-units"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"golang.org/x/sys/unix"

	"arena/engine"
	"arena/imageref"
	"arena/judger"
	"arena/orchestrator"
	"arena/registry"
	"arena/sandbox"
)

// Config is every setting of the sandbox and the match limits, read from
// the environment (ARENA_*) and overridden by flags. Validate names the
// bad setting.
type Config struct {
	// The server's (arena serve).
	// LogicGames are the games registered by name whose rules are a logic
	// image (ARENA_GAMES).
	LogicGames      []LogicGame
	Host            string
	Port            int
	Data            string
	Concurrency     int
	ConcurrencyMax  int // ARENA_CONCURRENCY_MAX; at most Concurrency: fixed
	VerifyAtOnce    int // ARENA_LOGIC_VERIFY
	Pool            int
	PoolMax         int    // warm containers in all; 0: no bound
	Pull            string // "never" or "missing"
	Allow           []string
	Token           string
	Hosts           []string
	QueueMax        int
	StartsPerMinute int // -1: no limit
	MaxConnections  int
	Shutdown        string // "cancel" or "finish"
	ShutdownTimeout time.Duration
	Ladder          bool
	LadderMax       int // entries per game's ladder; 0: no limit
	LadderPerOwner  int // entries per owner on a game's ladder; 0: no limit
	// Accounts (serve): the mode ("" until Validate: local on a loopback
	// address, else accounts), who may sign up, what anonymous visitors
	// see, the admin's password, and each user's share of the queue.
	Auth          string
	Signup        string
	Public        string
	AdminPassword string
	UserQueueMax  int
	// Challenges and people's seats (ARENA_CHALLENGES_PER_DAY,
	// ARENA_LADDER_RANKED_CHALLENGES, ARENA_HUMAN_TURN, ARENA_HUMAN_MATCHES).
	ChallengesPerDay int
	RankedChallenges bool
	HumanTurn        time.Duration
	HumanMatches     int
	// HumanPerUser bounds one user's matches with them playing
	// (ARENA_HUMAN_MATCHES_PER_USER; 0: no bound).
	HumanPerUser int
	// KeepReplays is how long the replays of ladder, practice, check and
	// challenge matches are kept (ARENA_KEEP_REPLAYS; 0: for ever).
	KeepReplays time.Duration
	// MetricsListen serves GET /metrics without sign-in on an address of
	// its own (ARENA_METRICS_LISTEN; empty: none).
	MetricsListen string
	ReadRate      int // -1: no limit
	TeamsPerUser  int // 0: no bound
	// TeamChanges bounds one user's invitations and removals of others
	// an hour (ARENA_TEAM_CHANGES_PER_HOUR), NotifyFromOthers the
	// notifications an hour caused by others that reach a person's
	// webhook (ARENA_NOTIFY_FROM_OTHERS_PER_HOUR); 0: no bound.
	TeamChanges      int
	NotifyFromOthers int
	// The per-client limits (serve): sign-ups without an invitation an
	// hour (-1: none), wrong passwords in a row for an account and from a
	// client, and the proxies that may name the client.
	SignupRate     int
	AccountTries   int
	ClientTries    int
	TrustedProxies []netip.Prefix
	// WebhookAllow are the private networks webhooks may reach
	// (ARENA_WEBHOOK_ALLOW).
	WebhookAllow []netip.Prefix
	// The registry (serve): served or not, the address this host's engine
	// pulls from, and the quotas per owner.
	Registry        bool
	RegistryHost    string
	RegistryStorage configuration.Storage
	BuildMemory     int64
	BuildTimeout    time.Duration
	// Builds run at once (ARENA_BUILDS; 0: half the CPUs, at least 1).
	Builds           int
	RegistryQuota    int64
	RegistryMaxRepos int
	RegistryMaxTags  int
	// DraftHistory is how many saves of a draft are kept
	// (ARENA_DRAFT_HISTORY).
	DraftHistory int
	// NATS (serve): the external cluster's URLs (empty: embedded), the
	// embedded server's client address for other hosts' workers, and the
	// work queue's policy.
	NATS       string
	NATSListen string
	NATSCA     string // PEM file of the external cluster's CAs
	// NATSCert and NATSKey: the operator's certificate (the chain up to
	// the CA workers pin) and key for the embedded NATS server.
	NATSCert, NATSKey string
	NATSLease         time.Duration
	NATSReplicas      int
	NATSDeliveries    int
	NATSInFlight      int // matches handed to NATS at once at most; 0: see inFlight
	WorkerBucketBytes int64
	// Every command's.
	// LogicLimits are a logic game's logic's limits where its game sets
	// none (ARENA_LOGIC_*).
	LogicLimits   judger.Limits
	MemoryBytes   int64
	CPUs          float64
	CPUSet        string
	PidsLimit     int64
	TmpfsBytes    int64
	ShmBytes      int64
	Runtime       string
	AnswerTimeout time.Duration // 0: the game's default
	WarmUp        time.Duration // 0: the game's default
	ReplayBudget  int64         // what a match's answers may add up to
	CgroupRoot    string
	Stdio         string
	StdioDir      string
	LogLevel      zapcore.Level
	// arena worker's own: its name and its join token.
	WorkerName, Join string
	// arena nats's own: a node of a NATS cluster.
	Node NATSNode
	// The client commands' (login, bots, submit, contest): the server
	// they talk to and where their credentials are kept ("": the user's
	// configuration folder).
	Server, ConfigDir string
}

// NATSNode is the node arena nats runs.
type NATSNode struct {
	Config, Name, Listen, Cluster, Data string
	Routes                              []string
}

// defaultStdioDir is where the bots' FIFOs live unless ARENA_STDIO_DIR says.
const defaultStdioDir = "/tmp/arena-stdio"

// setting describes one setting: its environment variable, flag, default
// and meaning. The list is the single source for flags, environment and the
// help text: no ARENA_* variable is read anywhere else (TestSettingsAreRead
// OnlyFromTheTable). Server settings only exist for `arena serve`; a
// setting of one other command (only: "worker", "nats", "client") only
// for it.
type setting struct {
	env, flag, def, usage string
	set                   func(c *Config, v string) error
	server                bool
	only                  string
	// secret settings are never shown: help gives no value from the
	// environment (the flag's default stays empty and load reads the
	// variable itself).
	secret bool
}

var settings = []setting{
	{env: "ARENA_HOST", flag: "host", def: "127.0.0.1", usage: "address to listen on (0.0.0.0: every interface)", server: true, set: func(c *Config, v string) error {
		c.Host = v
		return nil
	}},
	{env: "ARENA_PORT", flag: "port", def: "5006", usage: "port of the web page and the API", server: true, set: func(c *Config, v string) (err error) {
		c.Port, err = strconv.Atoi(v)
		if err == nil && (c.Port < 1 || c.Port > 65535) {
			err = fmt.Errorf("%d is not a port", c.Port)
		}
		return err
	}},
	{env: "ARENA_DATA", flag: "data", def: "arena-data", usage: "data folder: serve's match history (SQLite), replays and NATS trust; a worker's key, the server's CA and the replays it is reporting", server: true, set: func(c *Config, v string) error {
		if v == "" {
			return errors.New("empty")
		}
		c.Data = v
		return nil
	}},
	{env: "ARENA_LOGIC_VERIFY", flag: "logic-verify", def: "1", usage: "a logic game's results reported by workers, played again on this server at once at most before they count (the logic alone on the recorded answers)", server: true, set: func(c *Config, v string) (err error) {
		c.VerifyAtOnce, err = strconv.Atoi(v)
		if err == nil && c.VerifyAtOnce < 1 {
			err = errors.New("must be at least 1")
		}
		return err
	}},
	{env: "ARENA_CONCURRENCY", flag: "concurrency", def: "", usage: "matches played at once on this host (default: half the CPUs, at least 1; serve: 0 leaves them all to workers)", server: true, set: func(c *Config, v string) (err error) {
		if v == "" {
			c.Concurrency = max(1, runtime.NumCPU()/2)
			return nil
		}
		c.Concurrency, err = strconv.Atoi(v)
		if err == nil && c.Concurrency < 0 {
			err = errors.New("must not be negative")
		}
		return err
	}},
	{env: "ARENA_CONCURRENCY_MAX", flag: "concurrency-max", def: "", usage: "above ARENA_CONCURRENCY: play up to this many matches at once on this host while its CPUs idle (bots that wait more than they think), one more or fewer every 5 s; empty: ARENA_CONCURRENCY always", server: true, set: func(c *Config, v string) (err error) {
		if v == "" {
			c.ConcurrencyMax = 0
			return nil
		}
		c.ConcurrencyMax, err = strconv.Atoi(v)
		if err == nil && c.ConcurrencyMax < 1 {
			err = errors.New("must be at least 1")
		}
		return err
	}},
	{env: "ARENA_NATS", flag: "nats", def: "", usage: "comma-separated URLs of the NATS cluster (nats://[USER:PASSWORD@]HOST:4222,…); serve: empty embeds its own", server: true, set: func(c *Config, v string) error {
		c.NATS = v
		if v == "" {
			return nil
		}
		for _, u := range strings.Split(v, ",") {
			if u = strings.TrimSpace(u); !strings.Contains(u, "://") {
				return fmt.Errorf("%q is not a URL (nats://HOST:PORT)", u)
			}
		}
		return nil
	}},
	{env: "ARENA_NATS_LISTEN", flag: "nats-listen", def: "", usage: "HOST:PORT where the embedded NATS server lets workers of other hosts connect; empty: this process only", server: true, set: func(c *Config, v string) error {
		c.NATSListen = v
		if v == "" {
			return nil
		}
		_, port, err := net.SplitHostPort(v)
		if err != nil {
			return err
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("%q is not a port", port)
		}
		return nil
	}},
	{env: "ARENA_NATS_CA", flag: "nats-ca", def: "", usage: "PEM file of the CAs that an external NATS cluster's certificates are checked against (else the system's, for tls:// URLs)", server: true, set: func(c *Config, v string) error {
		c.NATSCA = v
		return nil
	}},
	{env: "ARENA_NATS_CERT", flag: "nats-cert", def: "", usage: "the embedded NATS server's certificate, PEM, the chain up to the CA that join tokens pin (the CA last); empty: Arena's own, made under the data folder", server: true, set: func(c *Config, v string) error {
		c.NATSCert = v
		return nil
	}},
	{env: "ARENA_NATS_KEY", flag: "nats-key", def: "", usage: "the key of ARENA_NATS_CERT, PEM", server: true, set: func(c *Config, v string) error {
		c.NATSKey = v
		return nil
	}},
	{env: "ARENA_NATS_LEASE", flag: "nats-lease", def: "30s", usage: "how long a worker holds a match without a sign of life before it goes to another", server: true, set: func(c *Config, v string) (err error) {
		c.NATSLease, err = time.ParseDuration(v)
		if err == nil && c.NATSLease < 100*time.Millisecond {
			err = errors.New("must be at least 100ms")
		}
		return err
	}},
	{env: "ARENA_NATS_REPLICAS", flag: "nats-replicas", def: "1", usage: "NATS nodes holding each stream (3 in a three-node cluster)", server: true, set: func(c *Config, v string) (err error) {
		c.NATSReplicas, err = strconv.Atoi(v)
		if err == nil && (c.NATSReplicas < 1 || c.NATSReplicas > 5) {
			err = errors.New("must be from 1 to 5")
		}
		return err
	}},
	{env: "ARENA_NATS_DELIVERIES", flag: "nats-deliveries", def: "5", usage: "deliveries of one match at most; past them it fails with every worker's reason", server: true, set: func(c *Config, v string) (err error) {
		c.NATSDeliveries, err = strconv.Atoi(v)
		if err == nil && c.NATSDeliveries < 1 {
			err = errors.New("must be at least 1")
		}
		return err
	}},
	{env: "ARENA_NATS_INFLIGHT", flag: "nats-inflight", def: "", usage: "matches handed to the workers at once at most: as many as the workers report slots, up to this; the others wait in the server's line (default: the concurrency when only this host plays, else 64)", server: true, set: func(c *Config, v string) (err error) {
		if v == "" {
			return nil
		}
		c.NATSInFlight, err = strconv.Atoi(v)
		if err == nil && c.NATSInFlight < 1 {
			err = errors.New("must be at least 1")
		}
		return err
	}},
	{env: "ARENA_WORKER_BUCKET_BYTES", flag: "worker-bucket-bytes", def: "2g", usage: "what each worker's object-store bucket may hold (its replays larger than a message, the pushed bots it fetches); past it the worker's puts are refused", server: true, set: func(c *Config, v string) (err error) {
		c.WorkerBucketBytes, err = units.RAMInBytes(v)
		if err == nil && c.WorkerBucketBytes < 1<<20 {
			err = errors.New("must be at least 1m")
		}
		return err
	}},
	{env: "ARENA_POOL", flag: "pool", def: "2", usage: "warm containers kept started for each bot image in use, so matches start at once (serve and bench; 0: none)", set: func(c *Config, v string) (err error) {
		c.Pool, err = strconv.Atoi(v)
		if err == nil && (c.Pool < 0 || c.Pool > 16) {
			err = errors.New("must be from 0 to 16")
		}
		return err
	}},
	{env: "ARENA_POOL_MAX", flag: "pool-max", def: "16", usage: "warm containers kept in all, for every image together: the images that play most often lately get them (0: no bound)", set: func(c *Config, v string) (err error) {
		c.PoolMax, err = strconv.Atoi(v)
		if err == nil && c.PoolMax < 0 {
			err = errors.New("must not be negative")
		}
		return err
	}},
	{env: "ARENA_PULL", flag: "pull", def: "never", usage: "never: only local images; missing: pull images that are not present", server: true, set: func(c *Config, v string) error {
		if v != "never" && v != "missing" {
			return errors.New("want never or missing")
		}
		c.Pull = v
		return nil
	}},
	{env: "ARENA_GAMES", flag: "games", def: "", usage: "games whose rules are a logic image (Saiblo judger protocol), offered beside the built-in ones: comma-separated NAME=IMAGE, e.g. ttt=my/ttt-logic", server: true, set: func(c *Config, v string) error {
		c.LogicGames = nil
		for _, item := range strings.Split(v, ",") {
			if item = strings.TrimSpace(item); item == "" {
				continue
			}
			name, image, ok := strings.Cut(item, "=")
			if !ok || judger.CheckName(name) != nil {
				return fmt.Errorf("%q: want NAME=IMAGE, NAME in lower case letters, digits, - and _ (at most 32)", item)
			}
			if err := imageref.Check(image); err != nil {
				return fmt.Errorf("%q: %v", item, err)
			}
			if _, err := engine.Find(games(), name); err == nil || slices.ContainsFunc(c.LogicGames, func(g LogicGame) bool { return g.Name == name }) {
				return fmt.Errorf("%q: the name %s is taken", item, name)
			}
			c.LogicGames = append(c.LogicGames, LogicGame{Name: name, Image: image})
		}
		return nil
	}},
	{env: "ARENA_ALLOW", flag: "allow", def: "", usage: "comma-separated patterns bot images must match, e.g. arena/*,team_*/*; empty: any", server: true, set: func(c *Config, v string) error {
		c.Allow = nil
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				if _, err := path.Match(p, ""); err != nil {
					return fmt.Errorf("pattern %q: %v", p, err)
				}
				c.Allow = append(c.Allow, p)
			}
		}
		return nil
	}},
	{env: "ARENA_TOKEN", flag: "token", def: "", secret: true, usage: "local mode: if set, starting and cancelling matches and changing a ladder need it (Authorization: Bearer TOKEN); accounts mode: the admin's API token", server: true, set: func(c *Config, v string) error {
		c.Token = v
		return nil
	}},
	{env: "ARENA_AUTH", flag: "auth", def: "", usage: "local: no accounts, every visitor acts as the admin; accounts: sign-in, teams and ownership; empty: local when listening on a loopback address, else accounts", server: true, set: func(c *Config, v string) error {
		if v != "" && v != "local" && v != "accounts" {
			return errors.New("want local or accounts")
		}
		c.Auth = v
		return nil
	}},
	{env: "ARENA_SIGNUP", flag: "signup", def: "invite", usage: "accounts mode: who may make an account: open (anyone), invite (with an admin's invitation link) or closed (only admins make them)", server: true, set: func(c *Config, v string) error {
		if v != "open" && v != "invite" && v != "closed" {
			return errors.New("want open, invite or closed")
		}
		c.Signup = v
		return nil
	}},
	{env: "ARENA_PUBLIC", flag: "public", def: "read", usage: "accounts mode: what visitors who are not signed in may do: read (watch matches, ladders and replays) or none", server: true, set: func(c *Config, v string) error {
		if v != "read" && v != "none" {
			return errors.New("want read or none")
		}
		c.Public = v
		return nil
	}},
	{env: "ARENA_ADMIN_PASSWORD", flag: "admin-password", def: "", secret: true, usage: "accounts mode: creates the admin account with this password at start, or resets its password (keep it in the environment or .env, not on a command line)", server: true, set: func(c *Config, v string) error {
		c.AdminPassword = v
		return nil
	}},
	{env: "ARENA_USER_QUEUE_MAX", flag: "user-queue-max", def: "64", usage: "matches one user may have waiting; the queue serves users in turn", server: true, set: func(c *Config, v string) (err error) {
		c.UserQueueMax, err = strconv.Atoi(v)
		if err == nil && c.UserQueueMax < 1 {
			err = errors.New("must be at least 1")
		}
		return err
	}},
	{env: "ARENA_CHALLENGES_PER_DAY", flag: "challenges-per-day", def: "20", usage: "challenges one user may make in 24 hours (admins any number); 0: no bound", server: true, set: func(c *Config, v string) (err error) {
		c.ChallengesPerDay, err = strconv.Atoi(v)
		if err == nil && c.ChallengesPerDay < 0 {
			err = errors.New("must not be negative")
		}
		return err
	}},
	{env: "ARENA_LADDER_RANKED_CHALLENGES", flag: "ladder-ranked-challenges", def: "off", usage: "on: a challenge between two entries of a ladder may ask to be rated by it; off: challenges are never rated", server: true, set: func(c *Config, v string) error {
		switch v {
		case "on":
			c.RankedChallenges = true
		case "off":
			c.RankedChallenges = false
		default:
			return errors.New("want on or off")
		}
		return nil
	}},
	{env: "ARENA_HUMAN_TURN", flag: "human-turn", def: "30s", usage: "the time a person playing a seat has for each move (bots keep their own limits)", server: true, set: func(c *Config, v string) (err error) {
		c.HumanTurn, err = time.ParseDuration(v)
		if err == nil && (c.HumanTurn < time.Second || c.HumanTurn > 10*time.Minute) {
			err = errors.New("must be from 1s to 10m")
		}
		return err
	}},
	{env: "ARENA_HUMAN_MATCHES", flag: "human-matches", def: "8", usage: "matches with a person playing a seat at once; they play on the server beside the match slots (0: none)", server: true, set: func(c *Config, v string) (err error) {
		c.HumanMatches, err = strconv.Atoi(v)
		if err == nil && c.HumanMatches < 0 {
			err = errors.New("must not be negative")
		}
		return err
	}},
	{env: "ARENA_HUMAN_MATCHES_PER_USER", flag: "human-matches-per-user", def: "2", usage: "matches one user may play a seat of at once (admins any number); 0: no bound", server: true, set: func(c *Config, v string) (err error) {
		c.HumanPerUser, err = strconv.Atoi(v)
		if err == nil && c.HumanPerUser < 0 {
			err = errors.New("must not be negative")
		}
		return err
	}},
	{env: "ARENA_KEEP_REPLAYS", flag: "keep-replays", def: "30d", usage: "how long the replays of ladder, practice, check and challenge matches are kept after they finish (their results and ratings stay): days (30d) or a duration (12h); 0: for ever", server: true, set: func(c *Config, v string) (err error) {
		c.KeepReplays, err = parseDays(v)
		return err
	}},
	{env: "ARENA_METRICS_LISTEN", flag: "metrics-listen", def: "", usage: "an address (HOST:PORT) where GET /metrics is served without sign-in, for a Prometheus on a private network; empty: only the page's port serves it, to an admin", server: true, set: func(c *Config, v string) error {
		if v != "" {
			if _, _, err := net.SplitHostPort(v); err != nil {
				return errors.New("want HOST:PORT, e.g. 10.0.0.5:9106")
			}
		}
		c.MetricsListen = v
		return nil
	}},
	{env: "ARENA_TEAMS_PER_USER", flag: "teams-per-user", def: "5", usage: "teams one user may make (each has quotas of its own; admins make any number); 0: no bound", server: true, set: func(c *Config, v string) (err error) {
		c.TeamsPerUser, err = strconv.Atoi(v)
		if err == nil && c.TeamsPerUser < 0 {
			err = errors.New("must not be negative")
		}
		return err
	}},
	{env: "ARENA_TEAM_CHANGES_PER_HOUR", flag: "team-changes-per-hour", def: "30", usage: "invitations into teams and removals of others from them one user may make an hour (admins any number; leaving is never bounded); 0: no bound", server: true, set: func(c *Config, v string) (err error) {
		c.TeamChanges, err = strconv.Atoi(v)
		if err == nil && c.TeamChanges < 0 {
			err = errors.New("must not be negative")
		}
		return err
	}},
	{env: "ARENA_NOTIFY_FROM_OTHERS_PER_HOUR", flag: "notify-from-others-per-hour", def: "20", usage: "notifications a person gets an hour because of others' actions (invitations) that go to their webhook; past it they stay on the bell only (results always go); 0: no bound", server: true, set: func(c *Config, v string) (err error) {
		c.NotifyFromOthers, err = strconv.Atoi(v)
		if err == nil && c.NotifyFromOthers < 0 {
			err = errors.New("must not be negative")
		}
		return err
	}},
	{env: "ARENA_READ_RATE", flag: "read-rate", def: "600", usage: "accounts mode: API requests one client that is not signed in may make a minute (0: no limit)", server: true, set: func(c *Config, v string) (err error) {
		c.ReadRate, err = strconv.Atoi(v)
		switch {
		case err != nil:
		case c.ReadRate < 0:
			err = errors.New("must not be negative")
		case c.ReadRate == 0:
			c.ReadRate = -1
		}
		return err
	}},
	{env: "ARENA_SIGNUP_RATE", flag: "signup-rate", def: "10", usage: "accounts mode: sign-ups one client may make an hour without an invitation (0: no limit); a sign-up with a valid invitation is not counted", server: true, set: func(c *Config, v string) (err error) {
		c.SignupRate, err = strconv.Atoi(v)
		switch {
		case err != nil:
		case c.SignupRate < 0:
			err = errors.New("must not be negative")
		case c.SignupRate == 0:
			c.SignupRate = -1
		}
		return err
	}},
	{env: "ARENA_SIGNIN_TRIES", flag: "signin-tries", def: "10,20", usage: "accounts mode: wrong passwords in a row before sign-ins are slowed: for one account, from one client (then one a minute, one every 30 s)", server: true, set: func(c *Config, v string) error {
		a, b, ok := strings.Cut(v, ",")
		var err1, err2 error
		c.AccountTries, err1 = strconv.Atoi(strings.TrimSpace(a))
		c.ClientTries, err2 = strconv.Atoi(strings.TrimSpace(b))
		if !ok || err1 != nil || err2 != nil || c.AccountTries < 1 || c.ClientTries < 1 {
			return errors.New("want two counts of at least 1: ACCOUNT,CLIENT, as 10,20")
		}
		return nil
	}},
	{env: "ARENA_TRUSTED_PROXIES", flag: "trusted-proxies", def: "", usage: "comma-separated addresses or CIDRs of the proxies in front of the server: only a connection from one may name the client (X-Forwarded-For, Forwarded) and the scheme (X-Forwarded-Proto); empty: none", server: true, set: func(c *Config, v string) error {
		var err error
		c.TrustedProxies, err = prefixes(v)
		return err
	}},
	{env: "ARENA_WEBHOOK_ALLOW", flag: "webhook-allow", def: "", usage: "comma-separated addresses or CIDRs of private, loopback or link-local networks people's webhooks may reach (e.g. a chat server on the LAN); empty: none, only public addresses (the server's own never)", server: true, set: func(c *Config, v string) (err error) {
		c.WebhookAllow, err = prefixes(v)
		return err
	}},
	{env: "ARENA_HOSTS", flag: "hosts", def: "", usage: "comma-separated host names the server answers to (Host header); * for any; empty: localhost, 127.0.0.1, ::1 and --host", server: true, set: func(c *Config, v string) error {
		c.Hosts = nil
		for _, h := range strings.Split(v, ",") {
			if h = strings.TrimSpace(h); h != "" {
				c.Hosts = append(c.Hosts, h)
			}
		}
		return nil
	}},
	{env: "ARENA_QUEUE_MAX", flag: "queue-max", def: "256", usage: "matches that may wait to start; past it starting one answers 429", server: true, set: func(c *Config, v string) (err error) {
		c.QueueMax, err = strconv.Atoi(v)
		if err == nil && c.QueueMax < 1 {
			err = errors.New("must be at least 1")
		}
		return err
	}},
	{env: "ARENA_RATE", flag: "rate", def: "60", usage: "matches one user (in local mode, one client) may start a minute (0: no limit)", server: true, set: func(c *Config, v string) (err error) {
		c.StartsPerMinute, err = strconv.Atoi(v)
		switch {
		case err != nil:
		case c.StartsPerMinute < 0:
			err = errors.New("must not be negative")
		case c.StartsPerMinute == 0:
			c.StartsPerMinute = -1
		}
		return err
	}},
	{env: "ARENA_MAX_CONNECTIONS", flag: "max-connections", def: "", usage: "HTTP connections served at once; more wait to be accepted (default: 4096, or half the open-files limit if lower)", server: true, set: func(c *Config, v string) (err error) {
		if v == "" {
			c.MaxConnections = defaultMaxConnections()
			return nil
		}
		c.MaxConnections, err = strconv.Atoi(v)
		if err == nil && c.MaxConnections < 8 {
			err = errors.New("must be at least 8")
		}
		return err
	}},
	{env: "ARENA_SHUTDOWN", flag: "shutdown", def: "cancel", usage: "on SIGTERM, cancel running matches or let them finish", server: true, set: func(c *Config, v string) error {
		if v != "cancel" && v != "finish" {
			return errors.New("want cancel or finish")
		}
		c.Shutdown = v
		return nil
	}},
	{env: "ARENA_SHUTDOWN_TIMEOUT", flag: "shutdown-timeout", def: "60s", usage: "how long a shutdown may wait for matches to finish", server: true, set: func(c *Config, v string) (err error) {
		c.ShutdownTimeout, err = time.ParseDuration(v)
		return err
	}},
	{env: "ARENA_LADDER", flag: "ladder", def: "on", usage: "on: each game's ladder plays rated matches by itself while it has two active entries or more; off: it plays none (entries can still be registered)", server: true, set: func(c *Config, v string) error {
		switch v {
		case "on":
			c.Ladder = true
		case "off":
			c.Ladder = false
		default:
			return errors.New("want on or off")
		}
		return nil
	}},
	{env: "ARENA_LADDER_MAX_ENTRIES", flag: "ladder-max-entries", def: "50", usage: "entries (active or paused) one game's ladder may hold; 0: no limit", server: true, set: func(c *Config, v string) (err error) {
		c.LadderMax, err = strconv.Atoi(v)
		if err == nil && c.LadderMax < 0 {
			err = errors.New("must not be negative")
		}
		return err
	}},
	{env: "ARENA_LADDER_ENTRIES_PER_OWNER", flag: "ladder-entries-per-owner", def: "3", usage: "entries (active or paused) one user or team may have on one game's ladder, a team's counting for each member too (an admin's are not bounded); 0: no limit", server: true, set: func(c *Config, v string) (err error) {
		c.LadderPerOwner, err = strconv.Atoi(v)
		if err == nil && c.LadderPerOwner < 0 {
			err = errors.New("must not be negative")
		}
		return err
	}},
	{env: "ARENA_REGISTRY", flag: "registry", def: "on", usage: "on: an OCI registry under /v2/ on the page's port (docker login, docker push NAME/bot); off: none", server: true, set: func(c *Config, v string) error {
		switch v {
		case "on":
			c.Registry = true
		case "off":
			c.Registry = false
		default:
			return errors.New("want on or off")
		}
		return nil
	}},
	{env: "ARENA_REGISTRY_HOST", flag: "registry-host", def: "", usage: "HOST:PORT this host's Docker engine pulls pushed bots from (empty: 127.0.0.1 and the page's port)", server: true, set: func(c *Config, v string) error {
		if v != "" {
			if _, _, err := net.SplitHostPort(v); err != nil {
				return err
			}
		}
		c.RegistryHost = v
		return nil
	}},
	{env: "ARENA_REGISTRY_STORAGE", flag: "registry-storage", def: "", secret: true, usage: "where the registry keeps its blobs: the distribution registry's storage section in YAML or JSON, e.g. {\"s3\": {\"bucket\": \"arena\", \"region\": \"us-east-1\", …}} (empty: ARENA_DATA/registry)", server: true, set: func(c *Config, v string) (err error) {
		c.RegistryStorage, err = registry.ParseStorage(v)
		return err
	}},
	{env: "ARENA_BUILD_MEMORY", flag: "build-memory", def: "2g", usage: "memory of a bot's build from an upload (its caches in /tmp count against it; no swap)", server: true, set: func(c *Config, v string) (err error) {
		c.BuildMemory, err = units.RAMInBytes(v)
		if err == nil && c.BuildMemory < 64<<20 {
			err = errors.New("a build needs at least 64m")
		}
		return err
	}},
	{env: "ARENA_BUILD_TIMEOUT", flag: "build-timeout", def: "5m", usage: "how long a bot's build from an upload may run", server: true, set: func(c *Config, v string) (err error) {
		c.BuildTimeout, err = time.ParseDuration(v)
		if err == nil && c.BuildTimeout <= 0 {
			err = errors.New("must be positive")
		}
		return err
	}},
	{env: "ARENA_BUILDS", flag: "builds", def: "", usage: "builds from uploads and drafts run at once, one per user (kits with no build step, Python and JavaScript, wait for none); empty: half the CPUs, at least 1", server: true, set: func(c *Config, v string) (err error) {
		if v == "" {
			c.Builds = 0
			return nil
		}
		c.Builds, err = strconv.Atoi(v)
		if err == nil && c.Builds < 1 {
			err = errors.New("must be 1 or more (empty: half the CPUs)")
		}
		return err
	}},
	{env: "ARENA_REGISTRY_QUOTA", flag: "registry-quota", def: "1g", usage: "what one user's (or team's) images may weigh in the registry (0: no bound)", server: true, set: func(c *Config, v string) (err error) {
		c.RegistryQuota, err = units.RAMInBytes(v)
		if err == nil && c.RegistryQuota < 0 {
			err = errors.New("must not be negative")
		}
		return err
	}},
	{env: "ARENA_REGISTRY_MAX_REPOS", flag: "registry-max-repos", def: "20", usage: "repositories one user (or team) may have in the registry (0: no bound)", server: true, set: func(c *Config, v string) (err error) {
		c.RegistryMaxRepos, err = strconv.Atoi(v)
		if err == nil && c.RegistryMaxRepos < 0 {
			err = errors.New("must not be negative")
		}
		return err
	}},
	{env: "ARENA_REGISTRY_MAX_TAGS", flag: "registry-max-tags", def: "100", usage: "tags one user (or team) may have in the registry (0: no bound)", server: true, set: func(c *Config, v string) (err error) {
		c.RegistryMaxTags, err = strconv.Atoi(v)
		if err == nil && c.RegistryMaxTags < 0 {
			err = errors.New("must not be negative")
		}
		return err
	}},
	{env: "ARENA_DRAFT_HISTORY", flag: "draft-history", def: "20", usage: "saves of each draft written in the page kept to restore from (each counts against ARENA_REGISTRY_QUOTA)", server: true, set: func(c *Config, v string) (err error) {
		c.DraftHistory, err = strconv.Atoi(v)
		if err == nil && c.DraftHistory < 1 {
			err = errors.New("must be at least 1")
		}
		return err
	}},
	{env: "ARENA_MEMORY", flag: "memory", def: "256m", usage: "memory limit per bot (no swap), e.g. 256m or 1g", set: func(c *Config, v string) (err error) {
		c.MemoryBytes, err = units.RAMInBytes(v)
		return err
	}},
	{env: "ARENA_CPUS", flag: "cpus", def: "1", usage: "CPU quota per bot, in CPUs (0.5, 1, 2)", set: func(c *Config, v string) (err error) {
		c.CPUs, err = strconv.ParseFloat(v, 64)
		return err
	}},
	{env: "ARENA_LOGIC_ROUND_MS", flag: "logic-round-ms", def: "10000", usage: "a logic game's logic: how long it may take for a round, in ms (a game registered with limits of its own keeps them)", set: func(c *Config, v string) (err error) {
		c.LogicLimits.RoundMS, err = strconv.ParseInt(v, 10, 64)
		return logicLimit(c, err, float64(c.LogicLimits.RoundMS))
	}},
	{env: "ARENA_LOGIC_MEMORY", flag: "logic-memory", def: "256m", usage: "a logic game's logic: its memory (no swap), e.g. 256m or 1g", set: func(c *Config, v string) (err error) {
		c.LogicLimits.MemoryBytes, err = units.RAMInBytes(v)
		return logicLimit(c, err, float64(c.LogicLimits.MemoryBytes))
	}},
	{env: "ARENA_LOGIC_CPUS", flag: "logic-cpus", def: "1", usage: "a logic game's logic: its CPU quota, in CPUs", set: func(c *Config, v string) (err error) {
		c.LogicLimits.CPUs, err = strconv.ParseFloat(v, 64)
		return logicLimit(c, err, c.LogicLimits.CPUs)
	}},
	{env: "ARENA_LOGIC_MESSAGE_BYTES", flag: "logic-message-bytes", def: "1m", usage: "a logic game's logic: the longest message it may send, e.g. 1m", set: func(c *Config, v string) (err error) {
		n, err := units.RAMInBytes(v)
		c.LogicLimits.MessageBytes = int(n)
		return logicLimit(c, err, float64(n))
	}},
	{env: "ARENA_CPUSET", flag: "cpuset", def: "", usage: "pin bots to these CPUs (e.g. 0-1); empty: any", set: func(c *Config, v string) error {
		c.CPUSet = v
		return nil
	}},
	{env: "ARENA_PIDS", flag: "pids", def: "64", usage: "process and thread limit per bot", set: func(c *Config, v string) (err error) {
		c.PidsLimit, err = strconv.ParseInt(v, 10, 64)
		return err
	}},
	{env: "ARENA_TMPFS", flag: "tmpfs", def: "16m", usage: "size of each bot's writable /tmp", set: func(c *Config, v string) (err error) {
		c.TmpfsBytes, err = units.RAMInBytes(v)
		return err
	}},
	{env: "ARENA_SHM", flag: "shm", def: "16m", usage: "size of each bot's /dev/shm", set: func(c *Config, v string) (err error) {
		c.ShmBytes, err = units.RAMInBytes(v)
		return err
	}},
	{env: "ARENA_RUNTIME", flag: "runtime", def: "", usage: "OCI runtime for bots (e.g. runsc); empty: the engine's default", set: func(c *Config, v string) error {
		c.Runtime = v
		return nil
	}},
	{env: "ARENA_TURN_TIMEOUT", flag: "timeout", def: "", usage: "time per answer (e.g. 100ms); empty: the game's default", set: func(c *Config, v string) (err error) {
		c.AnswerTimeout, err = parseOptionalDuration(v)
		return err
	}},
	{env: "ARENA_WARMUP", flag: "warmup", def: "", usage: "window from container start to the first answer (e.g. 20s); empty: the game's default", set: func(c *Config, v string) (err error) {
		c.WarmUp, err = parseOptionalDuration(v)
		return err
	}},
	{env: "ARENA_REPLAY_BUDGET", flag: "replay-budget", def: "32m", usage: "what a match's answers may add up to, shared by its bots (a bot past its share is output_limit)", set: func(c *Config, v string) (err error) {
		c.ReplayBudget, err = units.RAMInBytes(v)
		if err == nil && c.ReplayBudget < 64<<10 {
			err = fmt.Errorf("%s is less than 64k", v)
		}
		return err
	}},
	{env: "ARENA_CGROUP_ROOT", flag: "cgroup-root", def: "/sys/fs/cgroup", usage: "where the host's cgroup filesystem is mounted (for CPU and memory figures)", set: func(c *Config, v string) error {
		c.CgroupRoot = v
		return nil
	}},
	{env: "ARENA_STDIO", flag: "stdio", def: "auto", usage: "how bots' stdio travels: auto (FIFOs shared with the engine when possible, else the attach stream) or attach", set: func(c *Config, v string) error {
		if v != "auto" && v != "attach" {
			return errors.New("want auto or attach")
		}
		c.Stdio = v
		return nil
	}},
	{env: "ARENA_STDIO_DIR", flag: "stdio-dir", def: defaultStdioDir, usage: "folder of the bots' FIFOs; the same path for Arena and the engine", set: func(c *Config, v string) error {
		if !filepath.IsAbs(v) {
			return errors.New("must be an absolute path")
		}
		c.StdioDir = v
		return nil
	}},
	{env: "ARENA_LOG_LEVEL", flag: "log-level", def: "warn", usage: "log level: debug, info, warn or error", set: func(c *Config, v string) error {
		return c.LogLevel.Set(v)
	}},

	// arena worker's own.
	{env: "ARENA_WORKER_NAME", flag: "name", def: "", usage: "the worker's name in match records: letters, digits, - and _ (default: the one it joined with, else the host's name)", only: "worker", set: func(c *Config, v string) error {
		c.WorkerName = v
		return nil
	}},
	{env: "ARENA_JOIN", flag: "join", def: "", usage: "join token of the server's embedded NATS (print it there with arena join-token); needed once: the worker keeps a key of its own in --data", only: "worker", secret: true, set: func(c *Config, v string) error {
		c.Join = v
		return nil
	}},

	// arena nats's own: a node of a NATS cluster (not the server's
	// embedded NATS, whose address is ARENA_NATS_LISTEN).
	{env: "ARENA_NATS_CONFIG", flag: "config", def: "", usage: "NATS configuration file with the users (see arena nats authorization) and TLS; required", only: "nats", set: func(c *Config, v string) error {
		c.Node.Config = v
		return nil
	}},
	{env: "ARENA_NATS_NAME", flag: "name", def: "arena-nats", usage: "server name, unique in the cluster", only: "nats", set: func(c *Config, v string) error {
		c.Node.Name = v
		return nil
	}},
	{env: "ARENA_NATS_NODE_LISTEN", flag: "listen", def: "0.0.0.0:4222", usage: "HOST:PORT for clients", only: "nats", set: func(c *Config, v string) error {
		c.Node.Listen = v
		return nil
	}},
	{env: "ARENA_NATS_CLUSTER", flag: "cluster", def: "", usage: "HOST:PORT for the other nodes; empty: a single server", only: "nats", set: func(c *Config, v string) error {
		c.Node.Cluster = v
		return nil
	}},
	{env: "ARENA_NATS_ROUTES", flag: "routes", def: "", usage: "comma-separated nats-route://HOST:PORT of the other nodes", only: "nats", set: func(c *Config, v string) error {
		c.Node.Routes = nil
		for _, r := range strings.Split(v, ",") {
			if r = strings.TrimSpace(r); r != "" {
				c.Node.Routes = append(c.Node.Routes, r)
			}
		}
		return nil
	}},
	{env: "ARENA_NATS_DATA", flag: "data", def: "arena-nats-data", usage: "folder of JetStream's files", only: "nats", set: func(c *Config, v string) error {
		if v == "" {
			return errors.New("empty")
		}
		c.Node.Data = v
		return nil
	}},

	// The client commands' (login, logout, bots, submit, contest): read
	// from the environment (settingValue).
	{env: "ARENA_SERVER", flag: "server", def: "http://localhost:5006", usage: "the server a client command talks to when none is named", only: "client", set: func(c *Config, v string) error {
		c.Server = v
		return nil
	}},
	{env: "ARENA_CONFIG", flag: "config-dir", def: "", usage: "the folder arena login keeps its tokens in (credentials.json); empty: the user's configuration folder's arena/", only: "client", set: func(c *Config, v string) error {
		c.ConfigDir = v
		return nil
	}},
}

func parseOptionalDuration(v string) (time.Duration, error) {
	if v == "" {
		return 0, nil
	}
	return time.ParseDuration(v)
}

// register adds the settings' flags to fs (the server's too when server
// is set); their values are applied by load. Flags default to the
// environment, then to the built-in default. The values are keyed by
// environment variable.
func register(fs *flag.FlagSet, server bool) map[string]*string {
	return registerIf(fs, func(s setting) bool { return (server || !s.server) && s.only == "" })
}

// registerOnly adds the named settings' flags to fs, for a command that
// needs only those; their values are applied by loadOnly.
func registerOnly(fs *flag.FlagSet, flags ...string) map[string]*string {
	return registerIf(fs, func(s setting) bool { return slices.Contains(flags, s.flag) && s.only == "" })
}

// registerFor adds the flags of one command's own settings (only: cmd).
func registerFor(fs *flag.FlagSet, cmd string) map[string]*string {
	return registerIf(fs, func(s setting) bool { return s.only == cmd })
}

func registerIf(fs *flag.FlagSet, want func(setting) bool) map[string]*string {
	vals := map[string]*string{}
	for _, s := range settings {
		if !want(s) {
			continue
		}
		def := s.def
		if v, ok := os.LookupEnv(s.env); ok && !s.secret {
			def = v
		}
		vals[s.env] = fs.String(s.flag, def, fmt.Sprintf("%s (env %s)", s.usage, s.env))
	}
	return vals
}

// settingValue is a setting's value from the environment, else its
// default: for a command that takes it without a flag. It panics for a
// variable the table does not have.
func settingValue(env string) string {
	for _, s := range settings {
		if s.env == env {
			if v, ok := os.LookupEnv(env); ok {
				return v
			}
			return s.def
		}
	}
	panic("no setting " + env)
}

// LogicGame is a game registered by name whose rules are a logic image.
type LogicGame struct{ Name, Image string }

// load builds the Config from the registered flags' values.
func load(vals map[string]*string) (Config, error) {
	c, err := loadOnly(vals)
	if err != nil {
		return Config{}, err
	}
	return c, c.Validate()
}

// loadOnly sets the registered settings and leaves the others at zero:
// the Config is only good for them.
func loadOnly(vals map[string]*string) (Config, error) {
	var c Config
	for _, s := range settings {
		if vals[s.env] == nil {
			continue
		}
		v := *vals[s.env]
		if s.secret && v == "" {
			v = os.Getenv(s.env)
		}
		if err := s.set(&c, strings.TrimSpace(v)); err != nil {
			shown := fmt.Sprintf("%q", v)
			if s.secret {
				shown = "(secret)"
			}
			return Config{}, fmt.Errorf("setting --%s / %s = %s: %v", s.flag, s.env, shown, err)
		}
	}
	return c, nil
}

// Validate checks the values and names the bad setting.
func (c Config) Validate() error {
	if err := c.Policy().Validate(); err != nil {
		return fmt.Errorf("sandbox setting: %w", err)
	}
	if c.AnswerTimeout < 0 {
		return fmt.Errorf("setting --timeout / ARENA_TURN_TIMEOUT: %v is negative", c.AnswerTimeout)
	}
	if c.WarmUp < 0 {
		return fmt.Errorf("setting --warmup / ARENA_WARMUP: %v is negative", c.WarmUp)
	}
	return nil
}

// authMode is the server's authentication mode: ARENA_AUTH, else local
// on a loopback address (this host's own users only) and accounts on any
// other.
func (c Config) authMode() string {
	if c.Auth != "" {
		return c.Auth
	}
	if loopback(c.Host) {
		return "local"
	}
	return "accounts"
}

// loopback reports whether a listening address is this host's loopback.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Policy is the sandbox policy these settings give.
// Orchestrator is the orchestrator options of these settings.
func (c Config) Orchestrator(log *zap.Logger) []orchestrator.Option {
	return []orchestrator.Option{orchestrator.WithLogger(log), orchestrator.WithReplayBudget(c.ReplayBudget)}
}

func (c Config) Policy() sandbox.Policy {
	p := sandbox.DefaultPolicy()
	p.MemoryBytes = c.MemoryBytes
	p.NanoCPUs = int64(c.CPUs * 1e9)
	p.CPUSet = c.CPUSet
	p.PidsLimit = c.PidsLimit
	p.TmpfsBytes = c.TmpfsBytes
	p.ShmBytes = c.ShmBytes
	p.Runtime = c.Runtime
	return p
}

// defaultMaxConnections keeps half the process's open files for the
// matches: 4096 connections, fewer under a low open-files limit.
func defaultMaxConnections() int {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil || lim.Cur >= 8192 {
		return 4096
	}
	return max(8, int(lim.Cur/2))
}

// logicLimit checks a logic's limit as its setting is read (v): each has
// a default, so zero is no limit here.
func logicLimit(c *Config, err error, v float64) error {
	if err != nil {
		return err
	}
	if v <= 0 {
		return errors.New("must be positive")
	}
	return c.LogicLimits.Check()
}

// parseDays reads a span as days ("30d") or a Go duration ("12h"); "0"
// is none.
func parseDays(v string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(v, "d"); ok {
		days, err := strconv.Atoi(n)
		if err != nil || days < 0 {
			return 0, errors.New("want a number of days (30d), a duration (12h) or 0")
		}
		return time.Duration(days) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, errors.New("want a number of days (30d), a duration (12h) or 0")
	}
	return d, nil
}

// slotRange is how many matches this host plays at once: base always, up
// to most while its CPUs idle (ARENA_CONCURRENCY_MAX).
func (c Config) slotRange() (base, most int, err error) {
	base, most = c.Concurrency, max(c.Concurrency, c.ConcurrencyMax)
	if c.ConcurrencyMax > 0 && c.ConcurrencyMax < c.Concurrency {
		return 0, 0, fmt.Errorf("setting --concurrency-max / ARENA_CONCURRENCY_MAX = %d is below ARENA_CONCURRENCY = %d: give it %d or more, or leave it empty", c.ConcurrencyMax, c.Concurrency, c.Concurrency)
	}
	if c.ConcurrencyMax > 0 && c.Concurrency == 0 {
		return 0, 0, errors.New("setting --concurrency-max / ARENA_CONCURRENCY_MAX needs ARENA_CONCURRENCY of 1 or more: with 0 this host plays no match")
	}
	return base, most, nil
}

// prefixes reads comma-separated addresses or CIDRs.
func prefixes(v string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(v, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			a, aerr := netip.ParseAddr(f)
			if aerr != nil {
				return nil, fmt.Errorf("%q is neither an address nor a CIDR", f)
			}
			p = netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen())
		}
		out = append(out, p.Masked())
	}
	return out, nil
}
