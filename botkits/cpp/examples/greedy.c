/* greedy.c: a Snake algorithm that walks to the nearest item ('o' apple or
 * 'O' shield) by breadth-first search, avoiding walls and snake cells.
 *
 * For each of the four moves it searches from the cell the move leads to,
 * and takes, in this order of preference: a move the opponent's head cannot
 * also reach this round (unless we would win that head-on), a move that
 * leaves at least as much room as our length, a move onto a cell that is not
 * about to become wall, a move from which an item is reachable, the nearest
 * item, the most room. The search knows that the
 * rings of the board become wall one after the other (round_to_shrink).
 *
 * Plain C against playerbase.h; the kit compiles it with g++ -std=c++11
 * (gcc accepts it too). Build and play it (from the kit's folder):
 *
 *   g++ -std=c++11 -O2 -I. -o /tmp/snakebot snake/snake_main.cpp examples/greedy.c
 *   arena run --game snake exec:/tmp/snakebot arena/snake-greedy
 *
 * printf() goes to the bot's log, not to the game.
 */
#include <stdio.h>
#include <stdlib.h>

#include "playerbase.h"

static const int dx[4] = {-1, 1, 0, 0}; /* up, down, left, right */
static const int dy[4] = {0, 0, -1, 1};

static int rows, cols;
static int period;       /* every period rounds the next ring becomes wall */
static int *seen = NULL; /* per cell: the search that last reached it */
static int *queue = NULL;
static int *depth = NULL;
static int stamp = 0;
static int cells = 0;

static int min2(int a, int b) { return a < b ? a : b; }

static int on_board(int x, int y) { return x >= 0 && y >= 0 && x < rows && y < cols; }

/* Which ring a cell lies on: 0 for the outermost rows and columns. */
static int ring(int x, int y) { return min2(min2(x, y), min2(rows - 1 - x, cols - 1 - y)); }

/* A cell the head may enter now: on the board, not a wall, not a snake. */
static int legal(struct Player *p, int x, int y) {
  char c;
  if (!on_board(x, y)) return 0;
  c = p->mat[x][y];
  return c != '#' && c != '1' && c != '2';
}

/* A cell the head may be on after move d (1 is this round's move): legal
 * now, and its ring still open then. */
static int usable(struct Player *p, int x, int y, int d) {
  int closed, close_at;
  if (!legal(p, x, y)) return 0;
  closed = p->round / period; /* rings 0..closed-1 are wall by now */
  close_at = p->round_to_shrink + (ring(x, y) - closed) * period;
  return d < close_at;
}

static int is_item(struct Player *p, int x, int y) {
  char c = p->mat[x][y];
  return c == 'o' || c == 'O';
}

/* Breadth-first search from (sx, sy), where this round's move puts the
 * head. Gives the number of moves from there to the nearest item (-1 when
 * none is reachable) and the number of cells reachable. */
static void explore(struct Player *p, int sx, int sy, int *dist, int *room) {
  int head = 0, tail = 0;
  stamp++;
  seen[p->your_posx * cols + p->your_posy] = stamp;
  seen[sx * cols + sy] = stamp;
  queue[tail] = sx * cols + sy;
  depth[tail++] = 1;
  *dist = -1;
  *room = 0;
  while (head < tail) {
    int at = queue[head], d = depth[head++];
    int x = at / cols, y = at % cols, i;
    (*room)++;
    if (*dist < 0 && is_item(p, x, y)) *dist = d - 1;
    for (i = 0; i < 4; i++) {
      int nx = x + dx[i], ny = y + dy[i];
      if (on_board(nx, ny) && seen[nx * cols + ny] != stamp && usable(p, nx, ny, d + 1)) {
        seen[nx * cols + ny] = stamp;
        queue[tail] = nx * cols + ny;
        depth[tail++] = d + 1;
      }
    }
  }
}

/* Whether we win a collision: a shield beats no shield, else the longer. */
static int stronger(struct Player *p) {
  int mine = p->your_status > 0, theirs = p->opponent_status > 0;
  if (mine != theirs) return mine;
  return p->your_score > p->opponent_score;
}

/* Whether the opponent's head could enter (x, y) this round. */
static int near_opponent(struct Player *p, int x, int y) {
  int dxo, dyo;
  if (p->opponent_status < 0 || p->opponent_posx < 0) return 0;
  dxo = abs(x - p->opponent_posx);
  dyo = abs(y - p->opponent_posy);
  return dxo + dyo == 1;
}

void init(struct Player *player) {
  int n;
  rows = player->row_cnt;
  cols = player->col_cnt;
  n = 4 * rows * cols;
  period = (n + min2(rows, cols) - 1) / min2(rows, cols);
  cells = rows * cols;
  seen = (int *)calloc((size_t)cells, sizeof(int));
  queue = (int *)malloc((size_t)cells * sizeof(int));
  depth = (int *)malloc((size_t)cells * sizeof(int));
  if (!seen || !queue || !depth) {
    fprintf(stderr, "greedy: out of memory\n");
    exit(1);
  }
  printf("greedy: %dx%d board, a ring closes every %d rounds\n", rows, cols, period);
}

struct Point walk(struct Player *player) {
  struct Point best = {player->your_posx - 1, player->your_posy};
  int found = 0, i;
  int best_risky = 0, best_tight = 0, best_doom = 0, best_dist = -1, best_room = -1;
  int strong = stronger(player);
  for (i = 0; i < 4; i++) {
    int x = player->your_posx + dx[i], y = player->your_posy + dy[i];
    int risky, tight, doom, dist, room, better;
    if (!legal(player, x, y)) continue; /* a wall or a snake: we would die */
    explore(player, x, y, &dist, &room);
    risky = !strong && near_opponent(player, x, y);
    tight = room < player->your_score;
    doom = !usable(player, x, y, 1); /* wall next round: we must get out */
    if (!found)
      better = 1;
    else if (risky != best_risky)
      better = !risky;
    else if (tight != best_tight)
      better = !tight;
    else if (doom != best_doom)
      better = !doom;
    else if ((dist >= 0) != (best_dist >= 0))
      better = dist >= 0;
    else if (dist != best_dist)
      better = dist < best_dist;
    else
      better = room > best_room;
    if (better) {
      found = 1;
      best.X = x;
      best.Y = y;
      best_risky = risky;
      best_tight = tight;
      best_doom = doom;
      best_dist = dist;
      best_room = room;
    }
  }
  if (!found)
    printf("round %d: trapped\n", player->round);
  else
    printf("round %d: to (%d,%d), item %d away, room %d\n", player->round, best.X, best.Y,
           best_dist, best_room);
  return best;
}
