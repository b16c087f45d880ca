// Package snake implements Snake ("snaker"): two snakes on an n×m grid eat
// apples and shields while the walls close in ring by ring. The rules are
// documented here and in the Snake kits' READMEs; this package is pure and
// deterministic.
//
// # Coordinates
//
// A cell is (x, y) = row x, column y, both from 0; row 0 is the top row of
// the map file. Cells are written [x,y] everywhere below.
//
// # Rounds
//
// Rounds count from 1. Round r starts with the shrink (when r is a multiple
// of the period P = ⌈4·n·m / min(n,m)⌉ the next ring, 0 being the outermost
// one, becomes wall), then both living bots get their state line and
// answer, then the round is resolved (the order and the decisions are in
// the spec and in match.go's snakeStages). Because the bots must see the
// new wall before they move, the shrink that starts round r+1 is applied
// as soon as round r is resolved: Turn() is r, and the frame of round r
// already shows the closed ring, with a "shrink" event.
//
// # Decisions the spec leaves open
//
//   - Collisions compare body lengths as they are at the start of the round
//     (what the bots saw), before anyone moves or grows.
//   - A snake that dies of its own move (invalid, wall, self) or of a fault
//     does not move, but its body stays solid for the rest of the round:
//     the other snake's head entering it is a body collision, decided by
//     shield and length as usual. Its tail is freed like any other when it
//     is not growing.
//   - When each head enters the other's body (two heads swapping cells),
//     each snake is the mover of its own collision; a snake killed that way
//     reports its own move's reason (opponent_body).
//   - The shield counter counts down in the round it is picked up: the
//     state line then shows shield_rounds−1, and a status of k protects in
//     the next k rounds.
//   - Items reappear after the moves, while the snakes that died this round
//     are still on the board. An item that finds no free cell waits and
//     appears at the end of the first round that frees one.
//   - A seat awaited but missing from the replies counts as a timeout.
//   - max_rounds above 10·n·m is lowered to it (Match.Settings shows the
//     effective value); a negative value is an error.
//
// # Frame
//
// Frame() is one JSON object, the state after Turn() rounds (round 0 is the
// start):
//
//	{
//	  "round": 12,              // rounds played
//	  "rows": 10, "cols": 10,   // n and m
//	  "board": ["##########", "#..o.1...#", ...],
//	                            // n strings of m symbols, exactly the "mat"
//	                            // the bots get next round: # wall, . ground,
//	                            // o apple, O shield, 1 / 2 a cell of snake
//	                            // 1 / 2 (seat 0 / 1); a closed ring over a
//	                            // snake's segment shows as #
//	  "shrink_period": 40,      // P
//	  "rings": 5,               // how many rings the board has, ⌈min(n,m)/2⌉
//	  "rings_closed": 1,        // rings 0..rings_closed-1 are wall
//	  "round_to_shrink": 28,    // as in the next round's state line
//	  "over": false,            // true on the last frame
//	  "snakes": [               // seat 0 (snake 1), then seat 1 (snake 2)
//	    {"seat": 0,
//	     "alive": true,
//	     "body": [[3,4],[3,5]], // head first; [] once dead
//	     "score": 9,            // the target length; kept at death
//	     "status": 0,           // as on the wire: -1 dead, 0, k shield rounds
//	     "shield": 0,           // shield rounds left (0 when none or dead)
//	     "death_reason": "",    // wall, self, opponent_head, opponent_body,
//	                            // head_on, invalid, timeout, crashed,
//	                            // bad_output; "" while alive
//	     "death_round": 0},     // the round it died in, 0 while alive
//	    {...}],
//	  "items": [{"type": "apple", "at": [1,3]}, {"type": "shield", "at": [5,5]}],
//	                            // row by row
//	  "events": [...]           // what happened in this round, in order
//	}
//
// Events, in the order they happened:
//
//	{"type":"died","seat":1,"reason":"wall","at":[0,4],"to":[-1,4]}
//	    at is the head before the move; to is the cell the bot asked for
//	    (absent after a fault or an unreadable answer)
//	{"type":"ate","seat":0,"item":"apple","at":[3,4]}
//	{"type":"spawn","item":"apple","at":[6,2]}
//	    an item (re)appeared: after being eaten, swallowed by the wall, or
//	    when a full board finally has room for it
//	{"type":"shrink","ring":1}
//	    ring 1 closed at the start of the next round; the items on it
//	    respawn inside (spawn events follow)
//
// Died events come first, then ate and spawn, then shrink and the spawns of
// the items it swallowed. The first frame has no events (the items placed at
// the start are in "items").
//
// # State line
//
// Each round every living bot gets one line (the spec's format, keys in this
// order): round, round_to_shrink, row_cnt, col_cnt, mat, you (1 or 2),
// your_posx, your_posy, opponent_posx, opponent_posy, your_status,
// opponent_status, your_score, opponent_score, your_body, opponent_body. It
// answers {"X":x,"Y":y}, the cell its head moves to.
package snake
