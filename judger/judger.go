// Package judger plays games whose rules are a program of their own, in
// any language: a logic speaking the Saiblo judger protocol, shipped as an
// image. Arena is the judger. The orchestrator starts the logic in the
// sandbox, as it starts a bot (a game's author is a stranger too), and a
// match of a logic game is the conversation below, turned into Arena's
// exchanges: what the logic sends a bot is delivered to it, the bots the
// logic listens to are awaited with Arena's fair timing, and their answers
// (or their faults) go back to the logic.
//
// The protocol, as the judger speaks it:
//
//   - Judger → logic: each message is a 4-byte big-endian length, then
//     that many bytes of JSON. The first is the init message:
//     {"player_list":[1,1],"player_num":2,"config":{…,"seed":N},
//     "replay":"/tmp/replay.json"}.
//   - Logic → judger: each message is a 4-byte big-endian length, a 4-byte
//     big-endian target, then the data. Target -1 is the judger; a seat's
//     number sends the data to that bot as it is.
//   - To the judger, a round config {"state":N,"time":3,"length":2048}
//     sets the time (seconds) and the length (bytes) of the bots' answers
//     from now on; a round {"state":N,"listen":[0],"player":[0,1],
//     "content":["…","…"]} delivers content[i] to player[i], then awaits
//     the listened seats; {"state":-1,"end_info":"{\"0\":1,\"1\":0}",
//     "end_state":"[\"OK\",\"TLE\"]"} ends the match with each seat's
//     score and status.
//   - {"watch":"…"} is for spectators: the round's frame keeps it.
//     {"action":"request_end_state"} is answered {"end_state":"[…]"}, the
//     seats' statuses as the judger saw them (OK, TLE, RE, OLE, MLE).
//   - Each awaited answer goes back to the logic as
//     {"player":0,"content":"…","time":MS} (the time it counted against
//     its limit, in milliseconds); a bot that did not answer is reported as
//     {"player":-1,"content":"{\"player\":0,\"state\":N,\"error\":1,
//     \"error_log\":\"timeOutError\"}"}: error 0 is a run error (crashed,
//     out of memory, its output unreadable), 1 a time-out, 2 an answer over
//     the round's length.
//   - Bots: the judger writes them the logic's content as it is, no
//     framing; a bot's answer is a 4-byte big-endian length, then its
//     bytes.
//
// Where Arena's judger chooses, it chooses reproducibility and Arena's
// fairness: the answers of a round go back to the logic once every seat
// it listens to has answered or faulted, in seat order (not in the order
// they arrived), so that a match is a function of its seed and its
// answers and arena replay verify can play it again; and each bot's first
// answer has Arena's warm-up (the game's WarmUp, ARENA_WARM_UP) rather
// than the round's time, as in every Arena game, so that an interpreter's
// start is not charged to the bot.
//
// A logic that crashes, hangs, talks garbage or addresses a seat that
// does not exist ends the match as failed (Err), which is no bot's loss.
package judger

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/docker/go-units"

	"arena/engine"
	"arena/framing"
	"arena/internal/bytesize"
	"arena/internal/errs"
)

// The image labels of a logic.
const (
	// LogicLabel says which protocol the logic speaks: "saiblo".
	LogicLabel = "io.arena.logic"
	// PlayersLabel is how many bots a match of it takes (default 2).
	PlayersLabel = "io.arena.players"
	// PlayerLabel, when set, is the folder in the image that holds the
	// game's own viewer page (index.html and its files), which the page
	// shows in a sandboxed iframe and hands the frames by postMessage.
	PlayerLabel = "io.arena.player"
	// TitleLabel, when set, is the game's name for people (the page
	// lists it beside the name the game is registered under).
	TitleLabel = "io.arena.title"
)

// MaxTitle caps a title, in characters.
const MaxTitle = 60

// Title is a logic's TitleLabel as the page may show it: its printable
// characters, spaces folded, at most MaxTitle of them.
func Title(labels map[string]string) string {
	var out []rune
	for _, r := range strings.Join(strings.Fields(labels[TitleLabel]), " ") {
		if len(out) == MaxTitle {
			break
		}
		if unicode.IsPrint(r) {
			out = append(out, r)
		}
	}
	return strings.TrimSpace(string(out))
}

// Prefix names a logic game by its image: "logic:IMAGE".
const Prefix = "logic:"

// nameRule is what a logic game registered by name may be called.
var nameRule = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}$`)

// CheckName checks a name a logic game is registered under: a lower-case
// letter, then lower-case letters, digits, - and _, at most 32 in all.
func CheckName(name string) error {
	if !nameRule.MatchString(name) {
		return fmt.Errorf("the game's name %q: want a lower-case letter, then lower-case letters, digits, - and _ (at most 32)", name)
	}
	return nil
}

// The protocol's defaults and Arena's caps on a logic.
const (
	// ReplayPath is where the init message tells the logic to write its
	// own replay: inside its writable /tmp.
	ReplayPath = "/tmp/replay.json"
	// DefaultAnswerTime and DefaultLength are the bots' limits until a
	// round config sets others (the Saiblo judger's defaults).
	DefaultAnswerTime = 3 * time.Second
	DefaultLength     = 2048
	// MaxAnswerTime and MaxLength bound what a round config may set.
	MaxAnswerTime = 60 * time.Second
	MaxLength     = 1 << 20
	// LogicTime is how long the logic may take by default to send its
	// next round (or its end) once it has what it waits for.
	LogicTime = 10 * time.Second
	// MaxLogicMessage caps one message of the logic by default, and
	// MaxLogicMessages the messages of one round.
	MaxLogicMessage  = 1 << 20
	MaxLogicMessages = 1024
	// MaxLogicBytes caps what the logic sends over a whole match.
	MaxLogicBytes = 64 << 20
)

// Game is a logic game: its image and the number of bots a match takes;
// a game registered by a server's operator has a name of its own.
type Game struct {
	name  string
	image string
	// id pins the image (its engine id, the digest of its config): the
	// logic played whatever its tag names later ("": the tag's image at
	// each match).
	id      string
	players int
	title   string
	limits  Limits
	// proposed are the limits its labels propose.
	proposed Limits
}

// Limits are a logic's own limits; a zero field is the default
// (DefaultLimits, or a server's settings).
type Limits struct {
	// RoundMS is how long the logic may take for a round, in ms: to send
	// its next round (or its end) once it has what it waits for.
	RoundMS int64 `json:"round_ms,omitempty"`
	// MemoryBytes is its memory (no swap), CPUs its CPU quota.
	MemoryBytes int64   `json:"memory_bytes,omitempty"`
	CPUs        float64 `json:"cpus,omitempty"`
	// MessageBytes caps one message it sends.
	MessageBytes int `json:"message_bytes,omitempty"`
}

// The bounds of Limits.
const (
	MinRound        = 100 * time.Millisecond
	MaxRound        = 10 * time.Minute
	MinMemoryBytes  = 6 << 20
	MaxMemoryBytes  = 64 << 30
	MinMessageBytes = 1 << 10
	MaxMessageBytes = 64 << 20
	MaxCPUs         = 64
)

// DefaultLimits are a logic's limits where neither the game nor the
// server sets them (the server's settings default to them too).
var DefaultLimits = Limits{RoundMS: LogicTime.Milliseconds(), MemoryBytes: 256 << 20, CPUs: 1, MessageBytes: MaxLogicMessage}

// Check says which limit is out of its bounds, by its name in the API.
func (l Limits) Check() error {
	switch {
	case l.RoundMS != 0 && (l.RoundMS < MinRound.Milliseconds() || l.RoundMS > MaxRound.Milliseconds()):
		return fmt.Errorf("round_ms %d: want %d to %d", l.RoundMS, MinRound.Milliseconds(), MaxRound.Milliseconds())
	case l.MemoryBytes != 0 && (l.MemoryBytes < MinMemoryBytes || l.MemoryBytes > MaxMemoryBytes):
		return fmt.Errorf("memory_bytes %d: want %d (6 MiB) to %d (64 GiB)", l.MemoryBytes, MinMemoryBytes, int64(MaxMemoryBytes))
	case l.CPUs != 0 && (l.CPUs < 0.01 || l.CPUs > MaxCPUs):
		return fmt.Errorf("cpus %v: want 0.01 to %d", l.CPUs, MaxCPUs)
	case l.MessageBytes != 0 && (l.MessageBytes < MinMessageBytes || l.MessageBytes > MaxMessageBytes):
		return fmt.Errorf("message_bytes %d: want %d (1 KiB) to %d (64 MiB)", l.MessageBytes, MinMessageBytes, MaxMessageBytes)
	}
	return nil
}

// Or is l with its zero fields taken from d.
func (l Limits) Or(d Limits) Limits {
	if l.RoundMS == 0 {
		l.RoundMS = d.RoundMS
	}
	if l.MemoryBytes == 0 {
		l.MemoryBytes = d.MemoryBytes
	}
	if l.CPUs == 0 {
		l.CPUs = d.CPUs
	}
	if l.MessageBytes == 0 {
		l.MessageBytes = d.MessageBytes
	}
	return l
}

// round is the logic's time for a round.
func (l Limits) round() time.Duration { return time.Duration(l.RoundMS) * time.Millisecond }

// The labels by which a logic's image proposes its limits: the admin who
// registers the game decides (they are shown, not applied).
const (
	RoundLabel   = "io.arena.logic.round-ms"
	MemoryLabel  = "io.arena.logic.memory"
	CPUsLabel    = "io.arena.logic.cpus"
	MessageLabel = "io.arena.logic.message-bytes"
)

// Proposed are the limits a logic's labels propose (zero fields: none).
func Proposed(labels map[string]string) (Limits, error) {
	var l Limits
	var err error
	size := func(label string) int64 {
		v := labels[label]
		if v == "" || err != nil {
			return 0
		}
		n, e := units.RAMInBytes(v)
		if e != nil {
			err = fmt.Errorf("label %s=%q: %v", label, v, e)
		}
		return n
	}
	l.MemoryBytes = size(MemoryLabel)
	l.MessageBytes = int(size(MessageLabel))
	if v := labels[RoundLabel]; v != "" && err == nil {
		if l.RoundMS, err = strconv.ParseInt(v, 10, 64); err != nil {
			err = fmt.Errorf("label %s=%q: want a number of milliseconds", RoundLabel, v)
		}
	}
	if v := labels[CPUsLabel]; v != "" && err == nil {
		if l.CPUs, err = strconv.ParseFloat(v, 64); err != nil {
			err = fmt.Errorf("label %s=%q: want a number of CPUs", CPUsLabel, v)
		}
	}
	if err == nil {
		err = l.Check()
	}
	if err != nil {
		return Limits{}, err
	}
	return l, nil
}

// Proposing is the game with the limits its image's labels propose.
func (g *Game) Proposing(l Limits) *Game {
	h := *g
	h.proposed = l
	return &h
}

// Proposed are the limits the logic's labels propose (see Proposed).
func (g *Game) Proposed() Limits { return g.proposed }

// Pinned is the game with its logic pinned to the image of that engine
// id (see Game.id).
func (g *Game) Pinned(id string) *Game {
	h := *g
	h.id = id
	return &h
}

// WithLimits is the game with those limits, its zero fields the
// defaults (DefaultLimits).
func (g *Game) WithLimits(l Limits) *Game {
	h := *g
	h.limits = l.Or(DefaultLimits)
	return &h
}

// Limits are the logic's limits.
func (g *Game) Limits() Limits { return g.limits }

// Players is how many bots a match takes.
func (g *Game) Players() int { return g.players }

// Named returns the logic game an operator registered as name, with its
// title (its TitleLabel, see Title; "" for none).
func Named(name, image string, players int, title string) *Game {
	g := New(image, players)
	g.name, g.title = name, title
	return g
}

// Title is the game's name for people, "" when its image gives none.
func (g *Game) Title() string { return g.title }

// New returns the game of a logic image, for matches of players bots.
func New(image string, players int) *Game {
	if players < 1 {
		players = 2
	}
	return &Game{image: image, players: players, limits: DefaultLimits}
}

// Players parses a logic's PlayersLabel ("" is 2).
func Players(label string) (int, error) {
	if label == "" {
		return 2, nil
	}
	n, err := strconv.Atoi(label)
	if err != nil || n < 1 || n > 16 {
		return 0, fmt.Errorf("label %s=%q: want a number of bots from 1 to 16", PlayersLabel, label)
	}
	return n, nil
}

// Name is "logic:IMAGE", or the name it was registered under.
func (g *Game) Name() string {
	if g.name != "" {
		return g.name
	}
	return Prefix + g.image
}

// HostImage is the logic's image as named, and its pinned id ("" if
// none).
func (g *Game) HostImage() (ref, id string) { return g.image, g.id }

// HostLimits are the logic's resources.
func (g *Game) HostLimits() engine.HostLimits {
	return engine.HostLimits{MemoryBytes: g.limits.MemoryBytes, NanoCPUs: int64(g.limits.CPUs * 1e9), MaxMessageBytes: g.limits.MessageBytes}
}

// theMap is the one map of a logic game: the logic makes its own world.
type theMap struct{ info engine.MapInfo }

func (m theMap) Info() engine.MapInfo { return m.info }
func (m theMap) Data() []byte         { return nil }

// Maps lists the one map, "default".
func (g *Game) Maps() []engine.MapInfo {
	return []engine.MapInfo{{Name: "default", MinPlayers: g.players, MaxPlayers: g.players}}
}

// Map returns "default".
func (g *Game) Map(name string) (engine.Map, error) {
	if name != "default" {
		return nil, fmt.Errorf("%w %q: a logic game has one map, default", engine.ErrUnknownMap, name)
	}
	return theMap{g.Maps()[0]}, nil
}

// ParseMap refuses: a logic takes its options as settings.
func (g *Game) ParseMap(name string, data []byte) (engine.Map, error) {
	return nil, fmt.Errorf("map %s: a logic game has no map files; its settings are the config its logic gets", name)
}

// Protocol: bots answer length-prefixed; each answer's length and time
// are the round's (Submit and Step), within these caps.
func (g *Game) Protocol() engine.Protocol {
	return engine.Protocol{Framing: framing.LengthPrefixed, MaxMessageBytes: MaxLength, AnswerTimeout: DefaultAnswerTime, WarmUp: 20 * time.Second}
}

// NewMatch prepares a match; nothing runs until Attach. The settings,
// a JSON object, are the config the logic gets, with the match's seed
// added as "seed".
func (g *Game) NewMatch(cfg engine.Config) (engine.Match, error) {
	if err := cfg.Map.Info().CheckPlayers(len(cfg.Players)); err != nil {
		return nil, err
	}
	config := map[string]json.RawMessage{}
	if t := bytes.TrimSpace(cfg.Settings); len(t) > 0 && !bytes.Equal(t, []byte("null")) {
		if err := json.Unmarshal(t, &config); err != nil {
			return nil, fmt.Errorf("settings: a JSON object, given to the logic as its config: %v", err)
		}
	}
	config["seed"] = json.RawMessage(strconv.FormatUint(cfg.Seed, 10))
	raw, err := json.Marshal(config)
	if err != nil {
		return nil, err
	}
	return &match{players: len(cfg.Players), config: raw, timeout: DefaultAnswerTime, length: DefaultLength, logicTime: g.limits.round(), maxMessage: g.limits.MessageBytes,
		states: slices.Repeat([]string{"OK"}, len(cfg.Players)),
		frame:  json.RawMessage(`{"round":0}`)}, nil
}

// match is a match in progress: the conversation with its logic.
type match struct {
	players int
	config  json.RawMessage
	host    engine.Host
	err     error
	// rounds is the rounds played, state the logic's number of the round
	// awaited.
	rounds, state int
	step          engine.Step
	// timeout and length are the bots' limits (the last round config).
	timeout time.Duration
	length  int
	frame   json.RawMessage
	result  engine.Result
	// logicTime is the logic's time for a round, maxMessage its longest
	// message.
	logicTime  time.Duration
	maxMessage int
	// read is what the logic sent so far.
	read int64
	// states are the seats' end_state words as the judger sees them.
	states []string
}

// Attach starts the conversation: the init message, then the logic's
// first round.
func (m *match) Attach(h engine.Host) error {
	m.host = h
	init, _ := json.Marshal(map[string]any{
		"player_list": slices.Repeat([]int{1}, m.players), "player_num": m.players,
		"config": m.config, "replay": ReplayPath,
	})
	if m.send(init) {
		m.next()
	}
	return m.err
}

// Err is why the match cannot go on, when the logic is at fault.
func (m *match) Err() error { return m.err }

func (m *match) fail(format string, args ...any) {
	if m.err == nil {
		m.err = fmt.Errorf(format, args...)
	}
	m.step = engine.Step{Done: true}
}

// send writes one length-prefixed message to the logic.
func (m *match) send(data []byte) bool {
	msg := make([]byte, 4+len(data))
	binary.BigEndian.PutUint32(msg, uint32(len(data)))
	copy(msg[4:], data)
	if err := m.host.Send(msg, time.Now().Add(m.logicTime)); err != nil {
		m.fail("writing to the logic: %v", err)
		return false
	}
	return true
}

// fromLogic is any message of the logic to the judger.
type fromLogic struct {
	State    *int            `json:"state"`
	Watch    *string         `json:"watch"`
	Action   string          `json:"action"`
	Time     *float64        `json:"time"`
	Length   *int            `json:"length"`
	Listen   []int           `json:"listen"`
	Player   []int           `json:"player"`
	Content  []string        `json:"content"`
	EndInfo  json.RawMessage `json:"end_info"`
	EndState json.RawMessage `json:"end_state"`
}

// next reads the logic until its next round, or its end.
func (m *match) next() {
	var send []engine.Message
	var sent []frameMessage
	var watch []string
	deadline := time.Now().Add(m.logicTime)
	for n := 0; ; n++ {
		if n == MaxLogicMessages {
			m.fail("the logic sent more than %d messages in one round", MaxLogicMessages)
			return
		}
		data, err := m.host.Receive(deadline)
		if err != nil {
			if errors.Is(err, framing.ErrTooLong) {
				m.fail("the logic sent a message over %s (its limit, message_bytes): %v", bytesize.String(int64(m.maxMessage)), err)
				return
			}
			if !time.Now().Before(deadline) {
				m.fail("the logic sent nothing more for %v (its time for a round): %v", m.logicTime, err)
			} else {
				m.fail("the logic stopped before the end of the match: %v", err)
			}
			return
		}
		if len(data) < 4 {
			m.fail("a message of the logic without its target")
			return
		}
		target, body := int32(binary.BigEndian.Uint32(data)), data[4:]
		if m.read += int64(len(body)); m.read > MaxLogicBytes {
			m.fail("the logic sent more than %d MiB in the match", MaxLogicBytes>>20)
			return
		}
		if target >= 0 {
			if int(target) >= m.players {
				m.fail("the logic sent a message to player %d; the match has %d", target, m.players)
				return
			}
			send = append(send, engine.Message{Seat: int(target), Data: body})
			sent = append(sent, frameMessage{To: int(target), Content: string(body)})
			continue
		}
		if target != -1 {
			m.fail("the logic sent a message to target %d (the judger is -1, the players 0 to %d)", target, m.players-1)
			return
		}
		var msg fromLogic
		dec := json.NewDecoder(bytes.NewReader(body))
		if err := dec.Decode(&msg); err != nil {
			m.fail("the logic sent the judger a message that is not a JSON object (%v): %.200q", err, body)
			return
		}
		switch {
		case msg.Watch != nil && msg.State == nil:
			// For spectators: the round's frame keeps it.
			watch = append(watch, *msg.Watch)
		case msg.Action == "request_end_state" && msg.State == nil:
			states, _ := json.Marshal(m.states)
			reply, _ := json.Marshal(map[string]string{"end_state": string(states)})
			if !m.send(reply) {
				return
			}
		case msg.State == nil:
			m.fail("the logic sent the judger a message without its state: %.200q", body)
			return
		case *msg.State == -1:
			m.end(msg, body)
			m.step = engine.Step{Done: true, Send: send}
			m.frameOf(sent, nil, watch)
			return
		case msg.Time != nil:
			if !m.setLimits(msg) {
				return
			}
		default:
			if !m.round(msg, &send, &sent) {
				return
			}
			m.state = *msg.State
			m.step = engine.Step{Send: send, Await: msg.Listen, AnswerTimeout: m.timeout}
			m.frameOf(sent, msg.Listen, watch)
			return
		}
	}
}

// setLimits applies a round config.
func (m *match) setLimits(msg fromLogic) bool {
	t := time.Duration(*msg.Time * float64(time.Second))
	if t <= 0 || t > MaxAnswerTime {
		m.fail("the logic's round config sets time %v s: want more than 0, at most %v", *msg.Time, MaxAnswerTime.Seconds())
		return false
	}
	m.timeout = t
	if msg.Length != nil {
		if *msg.Length <= 0 || *msg.Length > MaxLength {
			m.fail("the logic's round config sets length %d: want 1 to %d bytes", *msg.Length, MaxLength)
			return false
		}
		m.length = *msg.Length
	}
	return true
}

// round checks a round's message and adds its deliveries.
func (m *match) round(msg fromLogic, send *[]engine.Message, sent *[]frameMessage) bool {
	if len(msg.Player) != len(msg.Content) {
		m.fail("the logic's round %d names %d players for %d contents", *msg.State, len(msg.Player), len(msg.Content))
		return false
	}
	for _, p := range append(slices.Clone(msg.Player), msg.Listen...) {
		if p < 0 || p >= m.players {
			m.fail("the logic's round %d names player %d; the match has %d", *msg.State, p, m.players)
			return false
		}
	}
	listen := slices.Clone(msg.Listen)
	slices.Sort(listen)
	if len(slices.Compact(listen)) != len(msg.Listen) {
		m.fail("the logic's round %d listens to a player twice: %v", *msg.State, msg.Listen)
		return false
	}
	for i, p := range msg.Player {
		*send = append(*send, engine.Message{Seat: p, Data: []byte(msg.Content[i])})
		*sent = append(*sent, frameMessage{To: p, Content: msg.Content[i]})
	}
	return true
}

// The end_state words and Arena's statuses.
var endStates = map[string]engine.Status{
	"OK": engine.StatusOK, "TLE": engine.StatusTimeout, "RE": engine.StatusCrashed,
	"OLE": engine.StatusOutputLimit, "IA": engine.StatusIllegal, "MLE": engine.StatusOOM,
}

// end reads the logic's end: every seat's score, and its status when the
// logic gives them.
func (m *match) end(msg fromLogic, body []byte) {
	if len(msg.EndInfo) == 0 {
		m.fail("the logic ended the match without end_info: %.200q", body)
		return
	}
	scores := map[string]float64{}
	if err := stringOrJSON(msg.EndInfo, &scores); err != nil {
		m.fail("the logic's end_info is not an object of scores by player (%v): %.200s", err, msg.EndInfo)
		return
	}
	res := engine.Result{Winners: []int{}, Seats: make([]engine.SeatResult, m.players)}
	best, all := math.Inf(-1), true
	for i := range m.players {
		s, ok := scores[strconv.Itoa(i)]
		if !ok {
			m.fail("the logic's end_info has no score for player %d: %.200s", i, msg.EndInfo)
			return
		}
		res.Seats[i].Score = int(math.Round(s))
		if i > 0 && s != scores["0"] {
			all = false
		}
		best = max(best, s)
	}
	if !all || m.players == 1 {
		for i := range m.players {
			if scores[strconv.Itoa(i)] == best {
				res.Winners = append(res.Winners, i)
			}
		}
	}
	if len(msg.EndState) > 0 {
		var states []string
		if err := stringOrJSON(msg.EndState, &states); err != nil || len(states) != m.players {
			m.fail("the logic's end_state is not a list of %d statuses: %.200s", m.players, msg.EndState)
			return
		}
		for i, st := range states {
			status, ok := endStates[st]
			if !ok {
				m.fail("the logic's end_state names %q for player %d (OK, RE, TLE, OLE, MLE or IA)", st, i)
				return
			}
			res.Seats[i].Status = status
		}
	}
	m.result = res
}

// stringOrJSON decodes raw into v, raw being JSON or a JSON string that
// holds JSON (as the protocol sends end_info).
func stringOrJSON(raw json.RawMessage, v any) error {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		raw = json.RawMessage(s)
	}
	return json.Unmarshal(raw, v)
}

// frameMessage is one delivery of a round, as the frame records it.
type frameMessage struct {
	To      int    `json:"to"`
	Content string `json:"content"`
}

// frameOf records a round: what the logic delivered, whom it listens to,
// and what it showed spectators (its watch messages).
func (m *match) frameOf(sent []frameMessage, listen []int, watch []string) {
	f, _ := json.Marshal(struct {
		Round    int            `json:"round"`
		State    int            `json:"state"`
		Listen   []int          `json:"listen"`
		Messages []frameMessage `json:"messages"`
		Watch    []string       `json:"watch,omitempty"`
	}{m.rounds, m.state, listenOrEmpty(listen), append([]frameMessage{}, sent...), watch})
	m.frame = f
}

func listenOrEmpty(l []int) []int {
	if l == nil {
		return []int{}
	}
	return l
}

// The error codes of the protocol, by fault.
func errorOf(f engine.Status) (int, string) {
	switch f {
	case engine.StatusTimeout:
		return 1, "timeOutError"
	case engine.StatusOutputLimit:
		return 2, "outputLimitError"
	}
	return 0, "runError"
}

// Step is the round the logic asked for.
func (m *match) Step() engine.Step { return m.step }

// endWords are the end_state words of Arena's faults, as the judger
// tells a logic that asks (request_end_state).
var endWords = map[engine.Status]string{
	engine.StatusTimeout: "TLE", engine.StatusOutputLimit: "OLE", engine.StatusOOM: "MLE",
	engine.StatusCrashed: "RE", engine.StatusBadOutput: "RE", engine.StatusStartFailed: "RE",
}

// Submit gives the logic the listened bots' answers, or their errors,
// and reads its next round.
func (m *match) Submit(replies []engine.Reply) []engine.Rejection {
	if m.err != nil || m.step.Done {
		return nil
	}
	for _, r := range replies {
		fault := r.Fault
		if fault == "" && len(r.Data) > m.length {
			fault = engine.StatusOutputLimit
		}
		var msg []byte
		if fault == "" {
			msg, _ = json.Marshal(map[string]any{"player": r.Seat, "content": string(r.Data), "time": r.Time.Milliseconds()})
		} else {
			m.states[r.Seat] = endWords[fault]
			code, log := errorOf(fault)
			content, _ := json.Marshal(map[string]any{"player": r.Seat, "state": m.state, "error": code, "error_log": log})
			msg, _ = json.Marshal(map[string]any{"player": -1, "content": string(content)})
		}
		if !m.send(msg) {
			return nil
		}
	}
	m.rounds++
	m.next()
	return nil
}

// Turn is the number of rounds played.
func (m *match) Turn() int { return m.rounds }

// Frame is the last round: what the logic delivered, whom it listens to.
func (m *match) Frame() json.RawMessage { return m.frame }

// Out: a logic says nothing of a seat being out before the end.
func (m *match) Out(int) bool { return false }

// Settings are the config the logic got.
func (m *match) Settings() json.RawMessage { return m.config }

// Result is the logic's end.
func (m *match) Result() engine.Result { return m.result }

// ErrNotALogic is wrapped by the error for an image that says it is no
// Saiblo logic.
var ErrNotALogic = errs.New(errs.ErrInvalid, "not a logic")

// CheckLabels checks a logic image's labels and returns its number of
// players: LogicLabel, when set, must say "saiblo".
func CheckLabels(labels map[string]string) (int, error) {
	if l, ok := labels[LogicLabel]; ok && l != "saiblo" {
		return 0, fmt.Errorf("%w: label %s=%q (Arena speaks the saiblo protocol)", ErrNotALogic, LogicLabel, l)
	}
	return Players(labels[PlayersLabel])
}

// CheckLabelled is CheckLabels for an image a server offers or plays as
// a game on someone's word (registered by name, or named in the API): it
// must also say it is a logic (LogicLabel=saiblo).
func CheckLabelled(labels map[string]string) (int, error) {
	if labels[LogicLabel] == "" {
		return 0, fmt.Errorf("%w: no label %s=saiblo (a logic's image says what it is: LABEL %s=saiblo)", ErrNotALogic, LogicLabel, LogicLabel)
	}
	return CheckLabels(labels)
}

// CheckHost checks the logic image's labels against the game's number of
// bots.
func (g *Game) CheckHost(labels map[string]string) error {
	n, err := CheckLabels(labels)
	if err != nil {
		return fmt.Errorf("the logic %s: %w", g.image, err)
	}
	if n != g.players {
		return fmt.Errorf("the logic %s takes %d bots (label %s), the match has %d", g.image, n, PlayersLabel, g.players)
	}
	return nil
}
