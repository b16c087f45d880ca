"""Replays the engine's transcript through the Python kit's rules.

Usage: python3 -B kitcheck.py PATH/TO/botkits/python/pacman.py TRANSCRIPT

TestKitRules (engine/pacman/kits_test.go) writes the transcript and runs
this script; the comments there say what is compared. Each seat's stdin,
exactly as the platform delivered it, is fed to a pacman.Game the way the
kit's input loop feeds it, and after every actions line the Game must hold
the engine's state after that round. On the first round that differs, the
script prints both values of each field that differs and exits with 1; on
success it prints how many rounds it compared.
"""

import importlib.util
import io
import json
import sys
from contextlib import redirect_stderr


def load_kit(path):
    spec = importlib.util.spec_from_file_location("pacman", path)
    kit = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(kit)
    return kit


def differences(g, want, board):
    """Each field where the Game differs from the engine, as
    "field: kit ..., engine ..."."""
    diff = []

    def field(name, kit, engine):
        if kit != engine:
            diff.append("%s: kit %s, engine %s" % (name, kit, engine))

    field("level", g.level, want["level"])
    field("round", g.round, want["round"])
    field("pacman", list(g.pacman), want["pacman"])
    field("ghosts", [list(p) for p in g.ghosts], want["ghosts"])
    field("score", list(g.score), want["score"])
    field("skills", list(g.skills), want["skills"])
    field("invulnerable", g.invulnerable, want["invulnerable"])
    field("survival", g._survival, want["survival"])
    field("catches", g._catches, want["catches"])
    field("beans left", g.beans_left, want["beans_left"])
    field("portal open", g.portal_open, want["portal_open"])
    field("level over", g.level_over, want["level_over"])
    field("game over", g.game_over, want["game_over"])
    if g.board == board:
        return diff
    cells = [(x, y) for x in range(len(board)) for y in range(len(board[x]))
             if g.at((x, y)) != board[x][y]]
    for x, y in cells[:5]:
        field("board[%d][%d]" % (x, y), g.at((x, y)), board[x][y])
    if len(g.board) != len(board):
        diff.append("board: kit %d rows, engine %d" % (len(g.board), len(board)))
    elif len(cells) > 5:
        diff.append("board: %d more cells differ" % (len(cells) - 5))
    return diff


class Difference(Exception):
    pass


def follow(kit, match, seat):
    """Feed seat's stdin to a Game and compare it with the engine after
    each round; return how many rounds were compared, or raise Difference
    at the first one that differs."""
    rounds = match["rounds"]
    g = kit.Game(kit.PACMAN if seat == match["pacman_seat"] else kit.GHOSTS)
    board = None  # the engine's board: the level's, then each round's changes
    played = 0
    text = match["stdin"][seat]
    lines = text[:-1].split("\n") if text.endswith("\n") else text.split("\n")
    for i, raw in enumerate(lines, 1):
        line = raw.strip()
        if g.seat < 0 and line in ("0", "1"):
            g.seat = int(line)
        elif line in ("player 0 send info", "player 1 send info"):
            pass
        elif line.startswith("{") and '"level"' in line:
            init = json.loads(line)
            g.start_level(init)
            board = [list(row) for row in init["board"]]
        elif line.startswith("{") and '"pacman_action"' in line:
            if played == len(rounds):
                raise Difference("line %d: more actions lines than the %d rounds the engine played" % (i, played))
            want = rounds[played]
            played += 1
            a = json.loads(line)
            g.play_round(a["pacman_action"], a["ghosts_action"])
            for x, y, v in want["board"]:
                board[x][y] = v
            diff = differences(g, want, board)
            if diff:
                raise Difference(
                    "line %d %s: the kit differs from the engine after level %d round %d (turn %d):\n\t%s"
                    % (i, line, want["level"], want["round"], played, "\n\t".join(diff)))
        else:
            raise Difference("line %d: unexpected line %.60r" % (i, line))
    if played != len(rounds):
        raise Difference("%d actions lines, but the engine played %d rounds" % (played, len(rounds)))
    return played


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    kit = load_kit(sys.argv[1])
    with open(sys.argv[2], encoding="utf-8") as f:
        transcript = json.load(f)
    compared, failed = 0, False
    for match in transcript["matches"]:
        for seat in (0, 1):
            try:
                # start_level logs each level on stderr, as a bot's debug
                # output does.
                with redirect_stderr(io.StringIO()):
                    compared += follow(kit, match, seat)
            except Difference as d:
                print("%s (seed %d, the Pac-Man on seat %d), seat %d's stdin, %s"
                      % (match["name"], match["seed"], match["pacman_seat"], seat, d))
                failed = True
                break  # the other seat reads the same rounds
    if failed:
        sys.exit(1)
    print("compared %d rounds" % compared)


if __name__ == "__main__":
    main()
