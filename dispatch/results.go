package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"

	"arena/dispatch/trust"
	"arena/engine"
	"arena/internal/errs"
	"arena/matches"
)

// errObjectStore: a replay could not be read from the object store (not
// the worker's doing, as far as can be told).
var errObjectStore = errors.New("the object store did not give the replay")

// check reads a result's replay (unless it is inline, decoded already)
// and checks it against the match; one that fails is refused, and the
// match queued again.
func (d *Dispatcher) check(w *wait, ev Event, inline *matches.Replay) {
	var rep *matches.Replay
	var err error
	if ev.Object != "" && d.cfg.Spool != "" {
		rep, err = d.checkedObject(w.req, ev, w.view)
	} else if rep, err = d.replay(w.req, ev, inline); err == nil {
		if err = matches.CheckReplay(w.req, rep); err == nil {
			w.view.fill(rep.Frames)
		}
	}
	if err == nil {
		err = d.verifyLogic(w.req, ev, rep)
	}
	forged := err == nil || !errors.Is(err, errObjectStore) && !errors.Is(err, errNotVerified)
	if err != nil && rep != nil && rep.File != "" {
		os.Remove(rep.File) // checked in, then refused
	}
	if err != nil {
		d.mu.Lock()
		w.over = false
		var then []func()
		if forged {
			then = d.refuseLocked(ev.Worker, ev.Match, "its result: "+err.Error(), nil)
		} else {
			d.log.Warn("a result's replay could not be read or verified", zap.String("match", ev.Match), zap.String("worker", ev.Worker), zap.Error(err))
		}
		then = append(then, d.requeueLocked(w, ev, fmt.Errorf("result refused: %w", err))...)
		d.mu.Unlock()
		for _, f := range then {
			f()
		}
		return
	}
	rep.Result.Worker = ev.Worker
	d.mu.Lock()
	defer d.mu.Unlock()
	explainStartFailed(rep, w.reasons)
	d.endLocked(ev.Match, w, result{rep: rep})
}

// errNotVerified: a logic game's replay could not be played again on
// the server, for a reason that is not the replay's.
var errNotVerified = errors.New("the server could not play the logic again")

// verifyLogic plays a logic game's reported match again, the logic alone
// on the recorded answers (VerifyLogic), unless the server's own worker
// played it: the result counts only if every frame and the result come
// out the same. VerifyAtOnce bound the verifications at a time.
func (d *Dispatcher) verifyLogic(req matches.Request, ev Event, rep *matches.Replay) error {
	game, ok := req.Game.(engine.Hosted)
	if !ok || d.cfg.Own != "" && ev.Worker == d.cfg.Own {
		return nil
	}
	if d.cfg.VerifyLogic == nil {
		return fmt.Errorf("%w: this server does not play logics again, so it believes no worker's logic game", errNotVerified)
	}
	if rep.File != "" {
		// Checked as it streamed in: its frames are in its file.
		whole, err := matches.ReadReplayWithin(rep.File, func(string) matches.ReplayBounds { return d.bounds(req) })
		if err != nil {
			return fmt.Errorf("%w: %w", errNotVerified, err)
		}
		whole.File = rep.File
		*rep = *whole
		defer func() { rep.Frames = nil }()
	}
	select {
	case d.verifying <- struct{}{}:
		defer func() { <-d.verifying }()
	case <-d.bgCtx.Done():
		return fmt.Errorf("%w: %w", errNotVerified, d.bgCtx.Err())
	}
	start := time.Now()
	err := d.cfg.VerifyLogic(d.bgCtx, game, rep)
	var mm *matches.Mismatch
	switch {
	case err == nil:
		d.log.Info("a logic game's result verified", zap.String("match", ev.Match), zap.String("worker", ev.Worker), zap.Duration("took", time.Since(start)))
		return nil
	case errors.As(err, &mm):
		return fmt.Errorf("%w: the logic, played again on the server, does not reproduce it: %v", matches.ErrForeignReplay, err)
	}
	return fmt.Errorf("%w: %w", errNotVerified, err)
}

// explainStartFailed adds to the detail of each bot that did not start
// (its image on no worker that took the match) why the earlier deliveries
// were handed back.
func explainStartFailed(rep *matches.Replay, earlier []string) {
	if len(earlier) == 0 {
		return
	}
	for i, b := range rep.Result.Bots {
		if b.Status == engine.StatusStartFailed {
			rep.Result.Bots[i].FaultDetail += "; before that: " + strings.Join(earlier, "; ")
		}
	}
}

// replay reads a result's replay, inline (decoded with the event already,
// unless it did not decode) or from its worker's bucket, within the
// bounds of a replay of req's match.
func (d *Dispatcher) replay(req matches.Request, ev Event, inline *matches.Replay) (*matches.Replay, error) {
	if ev.Object == "" {
		if inline != nil {
			return inline, nil
		}
		var rep matches.Replay
		if err := json.Unmarshal(ev.Replay, &rep); err != nil {
			return nil, fmt.Errorf("replay of %s: %w", ev.Match, err)
		}
		return &rep, nil
	}
	var rep *matches.Replay
	err := d.fromObject(ev, func(r io.Reader) (err error) {
		rep, err = decodeObject(r, d.bounds(req))
		return err
	}, aboutTheReplay)
	if err != nil {
		return nil, err
	}
	return rep, nil
}

// bounds are the bounds a reported replay of req's match is read within.
func (d *Dispatcher) bounds(req matches.Request) matches.ReplayBounds {
	return req.ReplayBounds(d.cfg.ReplayBudget)
}

// decodeObject decodes a replay read from the object store within b, and
// reads it to its end, where the object's digest is checked.
func decodeObject(r io.Reader, b matches.ReplayBounds) (*matches.Replay, error) {
	rep, err := matches.DecodeReplay(r, func(string) matches.ReplayBounds { return b })
	if err != nil {
		return nil, err
	}
	if _, err := io.Copy(io.Discard, r); err != nil {
		return nil, err
	}
	return rep, nil
}

// aboutTheReplay says whether an error reading a replay from the object
// store is the replay's own (it is no JSON, or is over a bound), not the
// read's: reading it again would fail again.
func aboutTheReplay(err error) bool {
	var syntax *json.SyntaxError
	var typed *json.UnmarshalTypeError
	return errors.As(err, &syntax) || errors.As(err, &typed) || errs.IsInvalid(err)
}

// fromObject reads a result's replay from its worker's bucket with read,
// and deletes it there. While the cluster elects a new leader (a node
// lost), reads fail for a few seconds: a read cut short is tried again,
// for a minute, unless final says its error is about the replay itself.
func (d *Dispatcher) fromObject(ev Event, read func(io.Reader) error, final func(error) bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		err := d.readObject(ctx, trust.BucketOf(ev.Worker), ev.Object, read)
		if err == nil {
			return nil
		}
		if final(err) {
			return fmt.Errorf("replay of %s: %w", ev.Match, err)
		}
		d.log.Warn("read a replay from the object store, trying again", zap.String("match", ev.Match), zap.Error(err))
		select {
		case <-ctx.Done():
			return fmt.Errorf("replay of %s from the object store: %w: %w", ev.Match, errObjectStore, err)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// readObject reads one object of a bucket with read, and deletes it once
// read.
func (d *Dispatcher) readObject(ctx context.Context, bucket, name string, read func(io.Reader) error) error {
	tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	obs, err := d.js.ObjectStore(tctx, bucket)
	if err != nil {
		return err
	}
	r, err := obs.Get(tctx, name)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := read(r); err != nil {
		return err
	}
	_ = deleteObject(tctx, d.js, obs, name)
	return nil
}

// deleteObject deletes an object of a bucket, its chunks first: the
// delete's marker is a message too, which a bucket at its bound refuses
// until the chunks purged make room for it.
func deleteObject(ctx context.Context, js jetstream.JetStream, obs jetstream.ObjectStore, name string) error {
	info, err := obs.GetInfo(ctx, name, jetstream.GetObjectInfoShowDeleted())
	if err != nil {
		return err
	}
	if !info.Deleted && info.NUID != "" {
		if st, err := js.Stream(ctx, "OBJ_"+info.Bucket); err == nil {
			_ = st.Purge(ctx, jetstream.WithPurgeSubject("$O."+info.Bucket+".C."+info.NUID))
		}
	}
	return obs.Delete(ctx, name)
}

// checkedObject reads a result's replay from its worker's bucket into a
// file in the spool folder, checking it as it streams in
// (matches.CheckReplayStream): the replay it returns has no frames
// in memory, its File holds it.
func (d *Dispatcher) checkedObject(req matches.Request, ev Event, view *viewer) (rep *matches.Replay, err error) {
	err = d.fromObject(ev, func(r io.Reader) error {
		rep, err = d.spool(req, r, view)
		return err
	}, func(err error) bool { return errors.Is(err, matches.ErrForeignReplay) })
	return rep, err
}
