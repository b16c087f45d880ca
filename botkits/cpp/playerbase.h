/* playerbase.h: the Snake player interface (from the snaker seed; keep it
 * exactly as it is).
 *
 * An algorithm is a C or C++ file that includes this header and defines
 * init() and walk(). The kit's main (snake/snake_main.cpp) reads the game's
 * JSON lines, fills struct Player, calls init() once before the first
 * walk(), then walk() every round, and sends the cell walk() returns. It is
 * compiled with g++ -std=c++11 (a .c file too: it is then C++, so the STL is
 * there), and plain C compilers accept the header as well.
 *
 * The board: mat[x][y] is the cell at row x, column y (0-based; row 0 is the
 * top row), for 0 <= x < row_cnt and 0 <= y < col_cnt; each row is also a
 * NUL-terminated string. Symbols: '#' wall, '.' ground, 'o' apple,
 * 'O' shield, '1' / '2' a cell of snake 1 / 2 (heads included; a head under
 * a wall that just closed shows '#').
 *   your_posx, your_posy          your head (row, column)
 *   opponent_posx, opponent_posy  the opponent's head (-1, -1 once it is dead)
 *   your_status, opponent_status  -1 dead, 0 normal, k > 0 shielded k more rounds
 *   your_score, opponent_score    the length each snake grows to
 *   round                         the round, from 1
 *   round_to_shrink               rounds until the next ring becomes wall
 *                                 (1: the next round starts with it)
 * walk() returns the cell the head moves to: one of its four neighbours
 * (X = row, Y = column).
 *
 * stdout is not the protocol: the kit sends it to stderr, so printf()
 * debugging ends up in the bot's log (the replay and the web viewer show it
 * per round).
 */
#ifndef PLAYERBASE_H
#define PLAYERBASE_H

#ifdef __cplusplus
extern "C" {
#endif

struct Point { int X, Y; };
struct Player {
  char **mat; int row_cnt, col_cnt;
  int your_posx, your_posy, opponent_posx, opponent_posy;
  int your_status, opponent_status, your_score, opponent_score;
  int round, round_to_shrink;
};
void init(struct Player *player);
struct Point walk(struct Player *player);

#ifdef __cplusplus
}
#endif

#endif /* PLAYERBASE_H */
