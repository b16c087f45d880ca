// Package pacman implements the Pac-Man-vs-ghosts game of the Saiblo
// platform ("卷王"): one bot plays the Pac-Man, the other the three ghosts,
// over three levels of seed-generated boards. The rules are documented here
// and in the kits' READMEs; this package is pure and deterministic: every
// board comes from engine.Rand streams of the match seed (one per level).
//
// # Map and settings
//
// There is one map, "saiblo", whose file is {"generator":"saiblo"}: the
// boards are generated, not drawn. The rules have no settings; the spec's
// settings (message size, answer time, warm-up) are the protocol limits of
// Protocol, which the platform applies. Settings must be absent, null or
// {}.
//
// # Protocol
//
// Bots answer with length-prefixed JSON (at most 1024 bytes): the Pac-Man
// {"role": 0, "action": "3"}, the ghosts {"role": 1, "action": "1 0 4"}.
// The platform writes plain lines. A round takes two exchanges (two Steps):
//
//	Step A  send what is pending, then await seat 0:
//	          at the start: "0\n" to seat 0, "1\n" to seat 1, then the level
//	          init line to both;
//	          after a round: "player 1 send info\n" and the actions line to
//	          seat 0, the actions line to seat 1, and when that round ended
//	          a level, the next level's init line to both.
//	Step B  send "player 0 send info\n" to seat 1, then await seat 1.
//	        Its answer plays the round; Turn() increases.
//
// So seat 0 reads "0", init, [answers], "player 1 send info", actions,
// [answers], ... and seat 1 reads "1", init, "player 0 send info",
// [answers], actions, "player 0 send info", [answers], ... exactly as the
// original judger wrote them. The init line is
// {"level": 1, "round": 0, "board_size": 41, "board": [[0, 0, ...], ...],
// "pacman_skill_status": [0, 0, 0, 0, 0], "pacman_coord": [x, y],
// "ghosts_coord": [[x, y], [x, y], [x, y]], "score": [pacman, ghosts],
// "beannumber": n, "portal_available": false, "portal_coord": [x, y]} and
// the actions line {"pacman_action": 3, "ghosts_action": [0, 2, 4]}, both
// with Python's json.dumps separators. When the last level ends, the Done
// step carries that round's "player 1 send info" and actions lines (best
// effort); a match ended by a fault, an illegal action or "Same Role"
// sends nothing more, as the original sent nothing more to its AI players.
//
// The first message of each seat claims its role. Both claiming the same
// role ends the match after seat 1's first answer ("Same Role"): both seats
// are rejected and score −1000, as in the original. A malformed message,
// an action string not of the required form, or a later message with
// another role is an illegal action: the seat is rejected (IA). A fault or
// an illegal action ends the match: the faulty seat gets its role's score
// −1000, the other its role's score +1000 (a seat that has not claimed a
// role yet scores 0 before that). Result's DeathReason carries the code:
// RE (crashed, oom, start_failed), TLE (timeout), OLE (output_limit) or IA
// (bad_output, rejected messages). The higher score wins; equal is a draw.
//
// # Turns and frames
//
// Turn() counts the rounds played; a round cut short by a fault also
// completes a turn, so that the final frame is recorded. Frame() is one
// compact JSON object, enough to draw that turn without any other frame:
//
//	turn               the turn (0: before the first round)
//	played             whether a round was played in this turn
//	round, level       the level's round counter and the level (1..3)
//	pacman_step_block  the Pac-Man's raw path: start, then each step's
//	                   target, wall bumps as target−100 on both coordinates
//	pacman_coord       where the Pac-Man is after the round (its respawn
//	                   cell when eaten)
//	pacman_skills      [double, speed, magnet, shield, freeze] at the
//	                   start of the round (zeros if eaten)
//	ghosts_step_block  three paths: start and target, wall bumps −200
//	ghosts_coord       the ghosts after the round
//	score              [Pac-Man, ghosts], without the fault ±1000
//	events             0 eaten, 1 shield destroyed, 2 level finished,
//	                   3 level timeout
//	portal_available   whether the portal is open after the round
//	StopReason         null, or why the match ended (last frame only)
//	beans_left         beannumber minus the beans eaten in this level
//	eaten              cells the Pac-Man cleared this round, in order
//	                   (beans and skill items)
//	caught_by          the ghost credited with a catch that counted, or −1
//	invulnerable       rounds the Pac-Man cannot be caught after this one
//	                   (3 after being eaten, 1 after a shield breaks,
//	                   counting down by one each round)
//	roles              the role claimed by each seat, −1 before its claim
//	max_rounds         the level's round limit (500, 400, 300)
//	portal_round       the round after which the level's portal opens (60,
//	                   50), 0 on a level without a portal
//	board              the level's board after the round: one string per
//	                   row x (0 first; x grows upward in the game), one
//	                   character per cell y: '#' wall, ' ' empty, '.' bean,
//	                   'o' bonus bean, 's' speed, 'm' magnet, 'h' shield,
//	                   'd' double, 'f' freeze, '@' portal
//	init               present when a level starts after this frame (turn
//	                   0, and the turn whose round ended levels 1 and 2):
//	                   the level's init object, as the bots receive it
//
// The fields from round to StopReason are the original replay's. A frame
// without a played round (turn 0, or a fault's turn) has empty paths and
// events and the current positions. The frame whose round ends a level
// shows that level (its board, round limit and portal); its init is the
// next level's. SaibloReplay turns the frames back into the original
// replay file.
package pacman
