package matches

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"arena/engine"
	"arena/internal/errs"
)

// Request is one match to play.
type Request struct {
	Game engine.Game
	Map  engine.Map
	Seed uint64
	// Images are the bots' image references, one per seat.
	Images []string
	// ImageIDs, when set, pin each seat to an exact image by its id
	// (resolved when the match was created, see Pin, perhaps on another
	// host): the match plays that image or fails with ErrImageNotFound.
	// An empty id leaves its seat to its reference (a local bot). The bots
	// keep the ids and names of Images.
	ImageIDs []string
	// ImageDigests, parallel to ImageIDs, are registry digests
	// (repository@sha256:…) of the pinned images, "" where none is known:
	// a host that lacks a pinned image pulls it by its digest when its
	// pull policy allows, and plays it if it is the pinned image.
	ImageDigests []string
	// MissingOn names this host (a worker, on a match's last delivery):
	// a bot whose pinned image is not here is then start_failed, the
	// detail naming the image and the host, and the match is played
	// without it, instead of failing.
	MissingOn string
	Settings  json.RawMessage
	// Limits override the game's defaults where non-zero.
	Limits Limits
	// MatchID names the match; empty picks a random one.
	MatchID string
	// Attempt counts the deliveries of a match played again elsewhere
	// after its first player was lost (0 or 1: the first); a later
	// attempt's containers get names of their own, so they never clash
	// with an earlier attempt's that may still be there.
	Attempt int
	// Priority places the match among the waiting ones: those started
	// by hand first, then challenges, then the background (a ladder's, a
	// contest's).
	Priority Priority
	// Kind says what the match is for (KindHand when empty): the queue
	// counts its waiting matches by it, and the platform keeps or
	// expires its replay by it.
	Kind Kind
	// People are the seats people play (a seat's image is then
	// "human:NAME", see HumanRef): their answers come from the platform,
	// not a container. A match with people plays on the server, beside
	// the queue's slots (see WithPeople). Never sent to a worker.
	People map[int]Person `json:"-"`
	// Owner is who the match is queued for: a queue serves its owners'
	// lines in turn (see Queue), so one owner's many matches delay only
	// their own.
	Owner string
	// OnFrame, when set, gets every frame as it is recorded (for live
	// viewers). It runs on the match's goroutine and must not block.
	OnFrame func(Frame)
}

// Priority orders a queue's waiting matches: every waiting match of a
// lower priority starts before any of a higher one.
type Priority int

// The priorities, in the order their matches start.
const (
	// ByHand is a match someone started and is waiting for.
	ByHand Priority = iota
	// Challenge is a challenge's match: someone waits for it, but less
	// urgently than for a match they started by hand.
	Challenge
	// Background is a match nobody is waiting for: a ladder's, a
	// contest's final or practice.
	Background
)

// Kind is what a match is for.
type Kind string

// The kinds of match.
const (
	// KindHand is a match someone started by hand (a person's seat too).
	KindHand Kind = "hand"
	// KindChallenge is a challenge's game.
	KindChallenge Kind = "challenge"
	// KindLadder is a ladder's match (a ranked challenge too).
	KindLadder Kind = "ladder"
	// KindCheck is the check a pushed bot plays before it is ready.
	KindCheck Kind = "check"
	// KindPractice is a contest's practice match.
	KindPractice Kind = "practice"
	// KindGate is a contest's gate game (against its reference bots).
	KindGate Kind = "gate"
	// KindContest is a game of a contest's rounds or final.
	KindContest Kind = "contest"
	// KindRun is a draft's Run: the bot being written against an
	// opponent, a private test.
	KindRun Kind = "run"
)

// Kinds are the kinds of match, in a fixed order.
var Kinds = []Kind{KindHand, KindChallenge, KindLadder, KindCheck, KindPractice, KindGate, KindContest, KindRun}

// OrHand returns k, or KindHand when k is empty.
func (k Kind) OrHand() Kind {
	if k == "" {
		return KindHand
	}
	return k
}

// Check is the request's own validation, which needs no launcher: a game
// and a map, bots, and a match the game accepts (the number of bots, the
// settings). Its errors are of errs.ErrInvalid.
func (req Request) Check() error {
	_, err := req.Match()
	return err
}

func (req Request) Match() (engine.Match, error) {
	if req.Game == nil || req.Map == nil {
		return nil, errs.New(errs.ErrInvalid, "no game or map given")
	}
	if len(req.Images) == 0 {
		return nil, errs.New(errs.ErrInvalid, "no bots given")
	}
	m, err := req.Game.NewMatch(engine.Config{Map: req.Map, Seed: req.Seed, Players: BotIDs(req.Images), Settings: req.Settings})
	if err != nil {
		return nil, errs.Mark(errs.ErrInvalid, err)
	}
	return m, nil
}

// BotIDs gives each image its id in a match: the reference as entered,
// with #2, #3… when the same image plays more than once.
func BotIDs(images []string) []string {
	ids := make([]string, len(images))
	seen := map[string]int{}
	for i, img := range images {
		seen[img]++
		ids[i] = img
		if n := seen[img]; n > 1 {
			ids[i] = fmt.Sprintf("%s#%d", img, n)
		}
	}
	return ids
}

// RandomSeed picks a seed for a match that was given none. It has 53 bits,
// so it survives JavaScript's numbers in the viewer.
func RandomSeed() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand never fails on Linux
	return binary.LittleEndian.Uint64(b[:]) >> 11
}

// NewMatchID returns a random match id.
func NewMatchID() string {
	var b [6]byte
	_, _ = rand.Read(b[:]) // crypto/rand never fails on Linux
	return hex.EncodeToString(b[:])
}
